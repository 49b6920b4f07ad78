-- The errors scenario: half 401 (GET with an unknown key), half 400 (PATCH
-- with a string quantity). wrk counts every answer as "Non-2xx"; with
-- CHECK=1 in the environment, response() counts the answers by status and
-- done() prints the counts.
local n, get, bad = 0, nil, nil
-- init, not the chunk, builds the requests: wrk sets the Host header after
-- loading the script, and Go answers a request without Host 400.
init = function(args)
  get = wrk.format("GET", "/v1/inventory", {["Authorization"] = "Bearer wrong-key"}, nil)
  bad = wrk.format("PATCH", "/v1/inventory/3",
    {["Authorization"] = "Bearer inventory-bench-key", ["Content-Type"] = "application/json"}, '{"quantity":"many"}')
end
request = function()
  n = n + 1
  if n % 2 == 0 then return get end
  return bad
end
if os.getenv("CHECK") == "1" then
  local threads = {}
  setup = function(thread) table.insert(threads, thread) end
  n401, n400, other = 0, 0, 0
  response = function(status, headers, body)
    if status == 401 then n401 = n401 + 1 elseif status == 400 then n400 = n400 + 1 else other = other + 1 end
  end
  done = function()
    local a, b, c = 0, 0, 0
    for _, t in ipairs(threads) do a, b, c = a + t:get("n401"), b + t:get("n400"), c + t:get("other") end
    io.write(string.format("statuses: 401 %d, 400 %d, other %d\n", a, b, c))
  end
end
