-- Job checkpoints (aqless's own): the last state a job's code stored to resume from, kept
-- as an extra field of the job hash (`checkpoint`, the JSON text as given) that other
-- clients ignore. Written together with a heartbeat by the worker that holds the job; it
-- stays through retries, lock expiry and hand-backs, so the next attempt starts from it
-- (aqless's own pops and pushes present it: see Job.json), and goes when the job
-- completes, is put again (Job.put, Job.complete) or is cancelled (with the job hash).

-- LIMIT: the longest state a checkpoint may hold, in bytes (aqless.job.CHECKPOINT_LIMIT).
local Checkpoint = {LIMIT = 65536}

--[=[ job.checkpoint
  Args     jid, worker, state, [attempt] (aqless's own: the job's code stores a JSON state
           to resume from, and the lock is renewed as job.heartbeat renews it; with the
           attempt, see Job.check_attempt)
  Reads    ql:j:<jid>, ql:config
  Writes   ql:j:<jid> (checkpoint, expires, worker), ql:w:<worker>:jobs, ql:q:<q>-locks
  Returns  the new lock expiry time (number)
  Errors   'Checkpoint(): Arg "state" missing or not JSON: <state>'   InvalidArgumentError
           'Checkpoint(): Arg "state" longer than 65536 bytes: <length>'   InvalidArgumentError
           as job.heartbeat
]=]
-- Renews the lock exactly as job.heartbeat does (refused, nothing written, as it is
-- refused), then stores `state`.
function Checkpoint.write(now, jid, worker, state, attempt)
  check(jid, 'Job(): no jid provided')
  check(worker, 'Heatbeat(): Arg "worker" missing')
  if state == nil or not pcall(cjson.decode, state) then
    raise('Checkpoint(): Arg "state" missing or not JSON: ' .. tostring(state))
  end
  check(#state <= Checkpoint.LIMIT,
    'Checkpoint(): Arg "state" longer than 65536 bytes: ' .. #state)
  local expires = Job.heartbeat(REQLESS, now, jid, worker, nil, attempt)
  call('HSET', Keys.job(jid), 'checkpoint', state)
  return expires
end

--[=[ jobs.checkpoints
  Args     jid... (aqless's own: what job.checkpoint stored)
  Reads    ql:j:<jid>
  Writes   none
  Returns  JSON object {jid: state} of the jobs that hold a checkpoint ({} when none)
  Errors   none
]=]
-- {jid: state} of the jobs among `jids` that hold a checkpoint.
function Checkpoint.of(jids)
  local parts = {}
  for _, jid in ipairs(jids) do
    local state = call('HGET', Keys.job(jid), 'checkpoint')
    if state then parts[#parts + 1] = json_string(jid) .. ':' .. state end
  end
  return '{' .. table.concat(parts, ',') .. '}'
end
