-- The list scenario: GET /v1/inventory with the bench's key.
wrk.method = "GET"
wrk.path = "/v1/inventory"
wrk.headers["Authorization"] = "Bearer inventory-bench-key"
