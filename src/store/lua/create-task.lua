-- Creates a task record (and, for the job APIs, its job record), charges its cost and puts it in
-- the enqueue outbox, all in one step: a task is never charged without being queued (the outbox
-- entry is moved into BullMQ right after, or by a sweep if that process died), and a refused
-- charge leaves nothing behind. With an Idempotency-Key, the key's record is checked and written in
-- the same step, so concurrent repeats of one request create one task and charge once.
-- KEYS[1] task hash, KEYS[2] credits balance, KEYS[3] user's task index (zset), KEYS[4] ledger list,
-- KEYS[5] enqueue outbox (zset), KEYS[6] job hash (written only when ARGV[6] > 0),
-- KEYS[7] active-task index (zset, for the lost-task sweep),
-- KEYS[8] idempotency record (a string "fingerprint|cost|task_id|job_id|created_ms"; read and
--         written only when ARGV[7] is not empty),
-- KEYS[9] deadline schedule (zset; written only when ARGV[9] > 0)
-- ARGV[1] task id, ARGV[2] cost, ARGV[3] record lifetime ms, ARGV[4] ledger reason,
-- ARGV[5] number of task field/value pairs (N), ARGV[6] number of job field/value pairs (M),
-- ARGV[7] idempotency fingerprint (empty: no Idempotency-Key), ARGV[8] idempotency record lifetime ms,
-- ARGV[9] cancel-after ms (0: no deadline; else the task's deadline is creation + this),
-- ARGV[10 .. 9+2N] task pairs, then ARGV[10+2N ..] job pairs
-- Returns {created_ms, balance}
--       | {-1, balance}                                   insufficient credits (nothing written)
--       | {-2, 0}                                         the task id exists
--       | {-3, cost, task_id, job_id, created_ms}         the key's first request, same fingerprint:
--                                                         its task (job_id empty for a task); nothing written
--       | {-4, 0}                                         the key was used with another fingerprint
local fp = ARGV[7]
local cost = tonumber(ARGV[2])
local n, m = tonumber(ARGV[5]), tonumber(ARGV[6])
local first = 10
local t = redis.call('TIME')
local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if fp ~= '' then
  if string.find(fp, '|', 1, true) then return redis.error_reply('the idempotency fingerprint must not contain |') end
  -- The record is claimed before anything else is checked, in one SET NX GET PX (Redis 7): it
  -- answers the previous record if there is one (and writes nothing), else writes this request's.
  -- One command where a read and a later write took two (and a hash four): this runs on every
  -- keyed create (bench core, section 5). The refusals below take the claim back.
  local job = ''
  for i = first, first - 1 + 2 * n, 2 do
    if ARGV[i] == 'job_id' then job = ARGV[i + 1] end
  end
  local prev = redis.pcall('SET', KEYS[8], fp .. '|' .. cost .. '|' .. ARGV[1] .. '|' .. job .. '|' .. ms, 'NX', 'GET', 'PX', ARGV[8])
  local pfp, pcost, ptask, pjob, pms
  if type(prev) == 'string' then
    pfp, pcost, ptask, pjob, pms = string.match(prev, '^([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)$')
  elseif type(prev) == 'table' and prev.err then
    -- WRONGTYPE: a record that contract version 3 wrote (a hash, for at most its 24 h), read as
    -- it was written. Any other error (a Redis before 7.0 has no SET NX GET) is the caller's.
    if string.sub(prev.err, 1, 9) ~= 'WRONGTYPE' then return redis.error_reply(prev.err) end
    local h = redis.call('HMGET', KEYS[8], 'fingerprint', 'cost', 'task_id', 'job_id', 'created_ms')
    pfp, pcost, ptask, pjob, pms = h[1], h[2], h[3], h[4], h[5]
  end
  if pfp then
    if pfp ~= fp then return {-4, 0} end
    return {-3, tonumber(pcost), ptask, pjob or '', tonumber(pms)}
  end
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  if fp ~= '' then redis.call('DEL', KEYS[8]) end
  return {-2, 0}
end
local balance = tonumber(redis.call('GET', KEYS[2]) or '0')
if balance < cost then
  if fp ~= '' then redis.call('DEL', KEYS[8]) end
  return {-1, balance}
end
if cost > 0 then
  balance = redis.call('DECRBY', KEYS[2], cost)
  redis.call('LPUSH', KEYS[4], cjson.encode({ts = ms, delta = -cost, balance = balance, reason = ARGV[4], ref = ARGV[1]}))
  redis.call('LTRIM', KEYS[4], 0, 9999)
end
redis.call('HSET', KEYS[1], 'status', 'starting', 'created_ms', ms, 'attempts', 0, 'cost', cost, unpack(ARGV, first, first - 1 + 2 * n))
local cancelAfter = tonumber(ARGV[9])
if cancelAfter > 0 then
  redis.call('HSET', KEYS[1], 'deadline_ms', ms + cancelAfter)
  redis.call('ZADD', KEYS[9], ms + cancelAfter, ARGV[1])
end
redis.call('ZADD', KEYS[3], ms, ARGV[1])
-- The index never outlives the records it points to by much.
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ms - tonumber(ARGV[3]) - 86400000)
redis.call('ZADD', KEYS[5], ms, ARGV[1])
redis.call('ZADD', KEYS[7], ms, ARGV[1])
if m > 0 then
  redis.call('HSET', KEYS[6], 'created_ms', ms, unpack(ARGV, first + 2 * n, first - 1 + 2 * n + 2 * m))
  -- A job record lives as long as its task's record can (plus its retention).
  redis.call('PEXPIRE', KEYS[6], tonumber(ARGV[3]) + 86400000 * 2)
end
return {ms, balance}
