-- The update scenario: PATCH /v1/inventory/{petId} with {"quantity":N},
-- over the 64 pets.
local n = 0
request = function()
  n = n + 1
  return wrk.format("PATCH", "/v1/inventory/" .. (n % 64 + 1),
    {["Authorization"] = "Bearer inventory-bench-key", ["Content-Type"] = "application/json"},
    '{"quantity":' .. (n % 1000) .. '}')
end
