-- Creates a task record (and, for the job APIs, its job record), charges its cost and puts it in
-- the enqueue outbox, all in one step: a task is never charged without being queued (the outbox
-- entry is moved into BullMQ right after, or by a sweep if that process died), and a refused
-- charge leaves nothing behind.
-- KEYS[1] task hash, KEYS[2] credits balance, KEYS[3] user's task index (zset), KEYS[4] ledger list,
-- KEYS[5] enqueue outbox (zset), KEYS[6] job hash (written only when ARGV[6] > 0),
-- KEYS[7] active-task index (zset, for the lost-task sweep)
-- ARGV[1] task id, ARGV[2] cost, ARGV[3] record lifetime ms, ARGV[4] ledger reason,
-- ARGV[5] number of task field/value pairs (N), ARGV[6] number of job field/value pairs (M),
-- ARGV[7 .. 6+2N] task pairs, then ARGV[7+2N ..] job pairs
-- Returns {created_ms, balance} or {-1, balance} (insufficient credits) or {-2, 0} (id exists).
if redis.call('EXISTS', KEYS[1]) == 1 then return {-2, 0} end
local cost = tonumber(ARGV[2])
local balance = tonumber(redis.call('GET', KEYS[2]) or '0')
if balance < cost then return {-1, balance} end
local t = redis.call('TIME')
local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local n, m = tonumber(ARGV[5]), tonumber(ARGV[6])
if cost > 0 then
  balance = redis.call('DECRBY', KEYS[2], cost)
  redis.call('LPUSH', KEYS[4], cjson.encode({ts = ms, delta = -cost, balance = balance, reason = ARGV[4], ref = ARGV[1]}))
  redis.call('LTRIM', KEYS[4], 0, 9999)
end
redis.call('HSET', KEYS[1], 'status', 'starting', 'created_ms', ms, 'attempts', 0, 'cost', cost, unpack(ARGV, 7, 6 + 2 * n))
redis.call('ZADD', KEYS[3], ms, ARGV[1])
-- The index never outlives the records it points to by much.
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ms - tonumber(ARGV[3]) - 86400000)
redis.call('ZADD', KEYS[5], ms, ARGV[1])
redis.call('ZADD', KEYS[7], ms, ARGV[1])
if m > 0 then
  redis.call('HSET', KEYS[6], 'created_ms', ms, unpack(ARGV, 7 + 2 * n, 6 + 2 * n + 2 * m))
  -- A job record lives as long as its task's record can (plus its retention).
  redis.call('PEXPIRE', KEYS[6], tonumber(ARGV[3]) + 86400000 * 2)
end
return {ms, balance}
