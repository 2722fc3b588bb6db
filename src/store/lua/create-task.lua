-- Creates a task record and charges its cost in one step.
-- KEYS[1] task hash, KEYS[2] credits balance, KEYS[3] user's task index (zset), KEYS[4] ledger list
-- ARGV[1] task id, ARGV[2] cost, ARGV[3] record lifetime ms (older index entries are trimmed),
-- ARGV[4..] field/value pairs of the record
-- Returns {created_ms, balance} or {-1, balance} (insufficient credits) or {-2, 0} (id exists).
if redis.call('EXISTS', KEYS[1]) == 1 then return {-2, 0} end
local cost = tonumber(ARGV[2])
local balance = tonumber(redis.call('GET', KEYS[2]) or '0')
if balance < cost then return {-1, balance} end
local t = redis.call('TIME')
local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if cost > 0 then
  balance = redis.call('DECRBY', KEYS[2], cost)
  redis.call('LPUSH', KEYS[4], cjson.encode({ts = ms, delta = -cost, balance = balance, reason = 'task', ref = ARGV[1]}))
  redis.call('LTRIM', KEYS[4], 0, 9999)
end
redis.call('HSET', KEYS[1], 'status', 'starting', 'created_ms', ms, 'attempts', 0, 'cost', cost, unpack(ARGV, 4))
redis.call('ZADD', KEYS[3], ms, ARGV[1])
-- The index never outlives the records it points to by much.
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ms - tonumber(ARGV[3]) - 86400000)
return {ms, balance}
