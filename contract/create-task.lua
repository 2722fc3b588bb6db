-- Creates a task record (and, for the job APIs, its job record), charges its cost and puts it in
-- the enqueue outbox, all in one step: a task is never charged without being queued (the outbox
-- entry is moved into BullMQ right after, or by a sweep if that process died), and a refused
-- charge leaves nothing behind. With an Idempotency-Key, the key's record is checked and written in
-- the same step, so concurrent repeats of one request create one task and charge once.
-- KEYS[1] task hash, KEYS[2] credits balance, KEYS[3] user's task index (zset), KEYS[4] ledger list,
-- KEYS[5] enqueue outbox (zset), KEYS[6] job hash (written only when ARGV[6] > 0),
-- KEYS[7] active-task index (zset, for the lost-task sweep),
-- KEYS[8] idempotency record (a string "fingerprint|cost|task_id|job_id|created_ms"; read and
--         written only when ARGV[7] is not empty, and only read when ARGV[8] is 0),
-- KEYS[9] deadline schedule (zset; written only when ARGV[9] > 0)
-- ARGV[1] task id, ARGV[2] cost, ARGV[3] record lifetime ms, ARGV[4] ledger reason,
-- ARGV[5] number of task field/value pairs (N), ARGV[6] number of job field/value pairs (M),
-- ARGV[7] idempotency fingerprint (empty: no Idempotency-Key), ARGV[8] idempotency record lifetime ms
--         (0: the task id was derived from the key, so the task record is the key's record: its
--         field idempotency_fingerprint is written here, and KEYS[8] is only read, for a record that
--         a producer without derived ids wrote),
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
-- The key's record is the task record itself (its id derived from the key): a keyed create then
-- costs Redis one field more than a plain one, where a record of its own took a key with a
-- lifetime (bench core, section 5: the header's cost on create throughput is bounded at 5%).
local own = fp ~= '' and ARGV[8] == '0'

-- A previous record's answer: {-3 ...} for the same fingerprint, {-4, 0} for another.
local function repeated(pfp, pcost, ptask, pjob, pms)
  if pfp ~= fp then return {-4, 0} end
  return {-3, tonumber(pcost), ptask, pjob or '', tonumber(pms)}
end
-- The record at KEYS[8], or nil. A hash is what contract version 3 wrote (for at most its 24 h),
-- read as it was written; any other error (a Redis before 7.0 has no SET NX GET) is the caller's.
local function recordAnswer(prev)
  if type(prev) == 'string' then
    local pfp, pcost, ptask, pjob, pms = string.match(prev, '^([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)$')
    if pfp then return repeated(pfp, pcost, ptask, pjob, pms) end
  elseif type(prev) == 'table' and prev.err then
    if string.sub(prev.err, 1, 9) ~= 'WRONGTYPE' then return redis.error_reply(prev.err) end
    local h = redis.call('HMGET', KEYS[8], 'fingerprint', 'cost', 'task_id', 'job_id', 'created_ms')
    if h[1] then return repeated(h[1], h[2], h[3], h[4], h[5]) end
  end
  return nil
end

if fp ~= '' then
  if string.find(fp, '|', 1, true) then return redis.error_reply('the idempotency fingerprint must not contain |') end
  local answer
  if own then
    answer = recordAnswer(redis.pcall('GET', KEYS[8]))
  else
    -- The record is claimed before anything else is checked, in one SET NX GET PX (Redis 7): it
    -- answers the previous record if there is one (and writes nothing), else writes this
    -- request's. The refusals below take the claim back.
    local job = ''
    for i = first, first - 1 + 2 * n, 2 do
      if ARGV[i] == 'job_id' then job = ARGV[i + 1] end
    end
    answer = recordAnswer(redis.pcall('SET', KEYS[8], fp .. '|' .. cost .. '|' .. ARGV[1] .. '|' .. job .. '|' .. ms, 'NX', 'GET', 'PX', ARGV[8]))
  end
  if answer then return answer end
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  if own then
    -- The key's first request (or a concurrent one) made this task.
    local h = redis.call('HMGET', KEYS[1], 'idempotency_fingerprint', 'cost', 'job_id', 'created_ms')
    return repeated(h[1], h[2], ARGV[1], h[3], h[4])
  end
  if fp ~= '' then redis.call('DEL', KEYS[8]) end
  return {-2, 0}
end
local balance = tonumber(redis.call('GET', KEYS[2]) or '0')
if balance < cost then
  if fp ~= '' and not own then redis.call('DEL', KEYS[8]) end
  return {-1, balance}
end
if cost > 0 then
  balance = redis.call('DECRBY', KEYS[2], cost)
  redis.call('LPUSH', KEYS[4], cjson.encode({ts = ms, delta = -cost, balance = balance, reason = ARGV[4], ref = ARGV[1]}))
  redis.call('LTRIM', KEYS[4], 0, 9999)
end
if own then
  redis.call('HSET', KEYS[1], 'idempotency_fingerprint', fp, 'status', 'starting', 'created_ms', ms, 'attempts', 0, 'cost', cost, unpack(ARGV, first, first - 1 + 2 * n))
else
  redis.call('HSET', KEYS[1], 'status', 'starting', 'created_ms', ms, 'attempts', 0, 'cost', cost, unpack(ARGV, first, first - 1 + 2 * n))
end
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
