-- Moves a task to a new status if, and only if, its current status is in the allowed set.
-- A terminal move also, in the same step: stamps completed_ms and total_time, schedules the
-- retention sweep, sets the record's expiry, and (succeeded/failed with a webhook_url) puts the
-- event in the webhook outbox, so no crash can lose a delivery or a deletion.
-- KEYS[1] task hash, KEYS[2] credits balance, KEYS[3] ledger list,
-- KEYS[4] retention schedule (zset), KEYS[5] webhook outbox (zset),
-- KEYS[6] active-task index (zset): a claim (re)schedules the task's lost-task check, an end drops it
-- ARGV[1] new status, ARGV[2] allowed current statuses, comma-separated
-- ARGV[3] '1' when the new status is terminal
-- ARGV[4] '1' to refund the task's cost (once)
-- ARGV[5] record expiry after completion, ms
-- ARGV[6] pub/sub channel: a terminal move publishes the task id there when the record has
--         `notify` set (someone waits on it: Prefer: wait, see store/task-events.ts)
-- ARGV[7..] extra field/value pairs to set
-- Returns {'ok', previous, now_ms, field1, value1, ...} (the record after the change)
--       | {'conflict', current} | {'missing'}
local cur = redis.call('HGET', KEYS[1], 'status')
if not cur then return {'missing'} end
if not string.find(',' .. ARGV[2] .. ',', ',' .. cur .. ',', 1, true) then return {'conflict', cur} end
local t = redis.call('TIME')
local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local id = redis.call('HGET', KEYS[1], 'task_id')
redis.call('HSET', KEYS[1], 'status', ARGV[1])
if ARGV[1] == 'processing' then
  redis.call('HINCRBY', KEYS[1], 'attempts', 1)
  redis.call('HSET', KEYS[1], 'started_ms', ms)
  redis.call('ZADD', KEYS[6], ms, id)
end
if ARGV[4] == '1' and redis.call('HSETNX', KEYS[1], 'refunded', '1') == 1 then
  local cost = tonumber(redis.call('HGET', KEYS[1], 'cost') or '0')
  if cost > 0 then
    local balance = redis.call('INCRBY', KEYS[2], cost)
    redis.call('LPUSH', KEYS[3], cjson.encode({ts = ms, delta = cost, balance = balance, reason = 'refund:' .. ARGV[1], ref = id}))
    redis.call('LTRIM', KEYS[3], 0, 9999)
  end
end
if #ARGV >= 7 then redis.call('HSET', KEYS[1], unpack(ARGV, 7)) end
if ARGV[3] == '1' then
  local created = tonumber(redis.call('HGET', KEYS[1], 'created_ms'))
  redis.call('HSET', KEYS[1], 'completed_ms', ms, 'total_time', (ms - created) / 1000)
  local keep = tonumber(redis.call('HGET', KEYS[1], 'retention_ms') or '3600000')
  redis.call('ZADD', KEYS[4], ms + keep, 'task:' .. id)
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[5]))
  redis.call('ZREM', KEYS[6], id)
  local hook = redis.call('HGET', KEYS[1], 'webhook_url')
  if hook and hook ~= '' and (ARGV[1] == 'succeeded' or ARGV[1] == 'failed') then
    redis.call('ZADD', KEYS[5], ms, id)
  end
  -- Only tasks someone waits on: the usual task end costs no message.
  if redis.call('HGET', KEYS[1], 'notify') then redis.call('PUBLISH', ARGV[6], id) end
end
local out = {'ok', cur, ms}
for _, v in ipairs(redis.call('HGETALL', KEYS[1])) do out[#out + 1] = v end
return out
