-- Job checkpoints (aqless's own): the last state a job's code stored to resume from, kept
-- as an extra field of the job hash (`checkpoint`, the JSON text as given) that other
-- clients ignore. Written together with a heartbeat by the worker that holds the job; it
-- stays through retries, lock expiry and hand-backs, so the next attempt starts from it
-- (aqless's own pops and pushes present it: see Job.json), and goes when the job
-- completes, is put again (Job.put, Job.complete) or is cancelled (with the job hash).

-- LIMIT: the longest state a checkpoint may hold, in bytes (aqless.job.CHECKPOINT_LIMIT).
local Checkpoint = {LIMIT = 65536}

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

-- {jid: state} of the jobs among `jids` that hold a checkpoint.
function Checkpoint.of(jids)
  local parts = {}
  for _, jid in ipairs(jids) do
    local state = call('HGET', Keys.job(jid), 'checkpoint')
    if state then parts[#parts + 1] = json_string(jid) .. ':' .. state end
  end
  return '{' .. table.concat(parts, ',') .. '}'
end
