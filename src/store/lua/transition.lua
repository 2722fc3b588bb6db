-- Moves a task to a new status if, and only if, its current status is in the allowed set.
-- KEYS[1] task hash, KEYS[2] credits balance, KEYS[3] ledger list
-- ARGV[1] new status, ARGV[2] allowed current statuses, comma-separated
-- ARGV[3] '1' when the new status is terminal (sets completed_ms and total_time)
-- ARGV[4] '1' to refund the task's cost (once)
-- ARGV[5..] extra field/value pairs to set
-- Returns {'ok', previous, now_ms, field1, value1, ...} (the record after the change) | {'conflict', current} | {'missing'}
local cur = redis.call('HGET', KEYS[1], 'status')
if not cur then return {'missing'} end
if not string.find(',' .. ARGV[2] .. ',', ',' .. cur .. ',', 1, true) then return {'conflict', cur} end
local t = redis.call('TIME')
local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('HSET', KEYS[1], 'status', ARGV[1])
if ARGV[1] == 'processing' then
  redis.call('HINCRBY', KEYS[1], 'attempts', 1)
  redis.call('HSET', KEYS[1], 'started_ms', ms)
end
if ARGV[3] == '1' then
  local created = tonumber(redis.call('HGET', KEYS[1], 'created_ms'))
  redis.call('HSET', KEYS[1], 'completed_ms', ms, 'total_time', (ms - created) / 1000)
end
if ARGV[4] == '1' and redis.call('HSETNX', KEYS[1], 'refunded', '1') == 1 then
  local cost = tonumber(redis.call('HGET', KEYS[1], 'cost') or '0')
  if cost > 0 then
    local balance = redis.call('INCRBY', KEYS[2], cost)
    local id = redis.call('HGET', KEYS[1], 'task_id')
    redis.call('LPUSH', KEYS[3], cjson.encode({ts = ms, delta = cost, balance = balance, reason = 'refund:' .. ARGV[1], ref = id}))
    redis.call('LTRIM', KEYS[3], 0, 9999)
  end
end
if #ARGV >= 5 then redis.call('HSET', KEYS[1], unpack(ARGV, 5)) end
local out = {'ok', cur, ms}
for _, v in ipairs(redis.call('HGETALL', KEYS[1])) do out[#out + 1] = v end
return out
