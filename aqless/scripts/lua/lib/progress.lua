-- Job progress (aqless's own): the last fraction (0 to 1) and message the job's code
-- reported, kept as extra fields of the job hash (`progress`, `progress_message`,
-- `progress_at`) that other clients ignore, and published on the channel `ql:progress`,
-- which no other client subscribes to. The fields stay through retries and after the job
-- ends, until the next report (and go with the job hash).

local Progress = {}

-- The longest message a report may carry, in bytes.
local PROGRESS_MESSAGE_LIMIT = 1024

-- Records a report from the worker that holds the job; refused (nothing written) when the
-- job is gone, not running, or given to another worker.
function Progress.report(now, jid, worker, fraction, message, attempt)
  check(jid, 'Job(): no jid provided')
  check(worker, 'Progress(): Arg "worker" missing')
  local f = number(fraction)
  check(f ~= nil and f >= 0 and f <= 1,
    'Progress(): Arg "fraction" not a number from 0 to 1: ' .. tostring(fraction))
  message = message or ''
  check(#message <= PROGRESS_MESSAGE_LIMIT,
    'Progress(): Arg "message" longer than 1024 bytes: ' .. #message)
  local key = Keys.job(jid)
  local v = call('HMGET', key, 'queue', 'worker', 'state', 'attempt')
  local queue, holder, state = v[1], v[2], v[3]
  check(queue, 'Progress(): Job ' .. jid .. ' does not exist')
  Job.check_attempt('Progress', jid, attempt, v[4])
  check(state == 'running', 'Progress(): Job ' .. jid .. ' not currently running: ' .. tostring(state))
  check(holder == worker,
    'Progress(): Job ' .. jid .. ' given out to another worker: ' .. tostring(holder))
  call('HSET', key, 'progress', fraction, 'progress_message', message, 'progress_at', now)
  Events.publish('progress', '{"jid":' .. json_value(jid) .. ',"event":"progress","queue":' ..
    json_value(queue) .. ',"worker":' .. json_value(worker) .. ',"fraction":' .. f ..
    ',"message":' .. json_value(message) .. '}')
end

-- {jid: {"fraction", "message", "at"}} of the jobs among `jids` that reported progress.
function Progress.of(jids)
  local parts = {}
  for _, jid in ipairs(jids) do
    local v = call('HMGET', Keys.job(jid), 'progress', 'progress_message', 'progress_at')
    local f = number(v[1])
    if f ~= nil then
      parts[#parts + 1] = json_string(jid) .. ':{"fraction":' .. f .. ',"message":' ..
        json_string(v[2] or '') .. ',"at":' .. json_number(v[3]) .. '}'
    end
  end
  return '{' .. table.concat(parts, ',') .. '}'
end
