package store

import "github.com/redis/go-redis/v9"

// initMeta returns meta if it exists; else it writes it and starts the
// clock at the server's time in microseconds, so that versions drawn after
// a server lost its data are not those drawn before, and returns nothing.
// KEYS: meta, the clock. ARGV: format, fingerprint, records, loaded, by.
var initMeta = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('HGETALL', KEYS[1]) end
redis.call('HSET', KEYS[1], 'format', ARGV[1], 'fingerprint', ARGV[2], 'records', ARGV[3], 'loaded', ARGV[4], 'by', ARGV[5])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
if tonumber(redis.call('GET', KEYS[2]) or '0') < now then redis.call('SET', KEYS[2], string.format('%d', now)) end
return {}
`)

// touch is the Lua function every script that uses a session starts
// with: it marks the session used (server time), makes its hash if it has
// none, sets its expiry, and past the most sessions drops the least
// recently used other than the default. Arguments: the session's hash and
// name, the sessions' sorted set, the idle time in ms, the most sessions
// besides the default, and the prefix of session hashes.
const touch = `
local function touch(hash, name, zset, idle, most, prefix)
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local new = redis.call('ZADD', zset, now, name)
  redis.call('HSETNX', hash, '_c', now)
  if name ~= 'default' then redis.call('PEXPIRE', hash, idle) end
  if new == 1 then
    local others = redis.call('ZCARD', zset)
    if redis.call('ZSCORE', zset, 'default') then others = others - 1 end
    while others > tonumber(most) do
      local victim = nil
      for _, n in ipairs(redis.call('ZRANGE', zset, 0, 2)) do
        if n ~= 'default' and n ~= name then victim = n break end
      end
      if victim == nil then break end
      redis.call('ZREM', zset, victim)
      redis.call('DEL', prefix .. victim)
      others = others - 1
    end
  end
end
`

// readSession returns the session's version, and its hash if the version
// is not ARGV[1]. KEYS: the session's hash, the sessions' set. ARGV: the
// cached version, "1" to touch, the session's name, idle ms, most
// sessions, the prefix of session hashes.
var readSession = redis.NewScript(touch + `
if ARGV[2] == '1' then touch(KEYS[1], ARGV[3], KEYS[2], ARGV[4], ARGV[5], ARGV[6]) end
local v = redis.call('HGET', KEYS[1], '_v') or '0'
if v == ARGV[1] then return {v} end
return {v, redis.call('HGETALL', KEYS[1])}
`)

// compareAndSet writes a record if the stored one is the expected one.
// KEYS: the session's hash, the sessions' set, the clock. ARGV: the
// record's key, the expected record, the fixture record (what a session
// that has not written it holds), the new record, the session's name, idle
// ms, most sessions, the prefix of session hashes, and "1" to mark the
// session used (it is marked anyway if its hash is new). It returns {1,
// new version, previous version}, or {0, the stored record}.
var compareAndSet = redis.NewScript(touch + `
local cur = redis.call('HGET', KEYS[1], ARGV[1]) or ARGV[3]
if cur ~= ARGV[2] then return {0, cur} end
local prev = redis.call('HGET', KEYS[1], '_v') or '0'
if ARGV[9] == '1' or redis.call('HEXISTS', KEYS[1], '_c') == 0 then
  touch(KEYS[1], ARGV[5], KEYS[2], ARGV[6], ARGV[7], ARGV[8])
end
local v = redis.call('INCR', KEYS[3])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[4], '_v', v)
redis.call('HINCRBY', KEYS[1], '_w', 1)
return {1, v, prev}
`)

// resetSession puts a session back to the fixtures, keeping when it was
// created. KEYS: the session's hash, the sessions' set. ARGV: the
// session's name, idle ms, most sessions, the prefix of session hashes.
var resetSession = redis.NewScript(touch + `
local c = redis.call('HGET', KEYS[1], '_c')
redis.call('DEL', KEYS[1])
if c then redis.call('HSET', KEYS[1], '_c', c) end
touch(KEYS[1], ARGV[1], KEYS[2], ARGV[2], ARGV[3], ARGV[4])
return 1
`)

// dropIdle drops the sessions other than the default unused for ARGV[1]
// ms. KEYS: the sessions' set. ARGV[2]: the prefix of session hashes.
var dropIdle = redis.NewScript(`
local t = redis.call('TIME')
local cutoff = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) - tonumber(ARGV[1])
local idle = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', cutoff)
for _, name in ipairs(idle) do
  if name ~= 'default' then
    redis.call('ZREM', KEYS[1], name)
    redis.call('DEL', ARGV[2] .. name)
  end
end
return #idle
`)
