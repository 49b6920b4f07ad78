-- Half 401 (no key), half 400 ({"quantity":"x"} with the key).
local n = 0
request = function()
  n = n + 1
  if n % 2 == 0 then
    return wrk.format("GET", "/v1/inventory", {}, nil)
  end
  return wrk.format("PATCH", "/v1/inventory/3",
    {["Authorization"] = "Bearer inventory-bench-key", ["Content-Type"] = "application/json"}, '{"quantity":"x"}')
end
