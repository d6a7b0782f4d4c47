--[=[ job.heartbeat | heartbeat
  Args     jid, worker, [data], [attempt] (aqless's own, job.heartbeat only: see
           Job.check_attempt; with it, data '' is none)
  Reads    ql:j:<jid>, ql:config
  Writes   ql:j:<jid>, ql:w:<worker>:jobs, ql:q:<q>-locks, ql:workers (classic only)
  Returns  the new lock expiry time (number)
  Errors   'Job(): no jid provided'   InvalidArgumentError
           'Heatbeat(): Arg "worker" missing'   InvalidArgumentError
           'Heartbeat(): Job {jid} does not exist'   JobNotFoundError
           'Heartbeat(): Job {jid} not currently running: {state}'   LockLostError
           'Heartbeat(): Job {jid} given out to another worker: {worker}'   LockLostError
           'Heartbeat(): Job does not exist'   JobNotFoundError
           'Heartbeat(): Job not currently running: {state}'   LockLostError
           'Heartbeat(): Job given out to another worker: {worker}'   LockLostError
           'Heartbeat(): Arg "attempt" not a whole number: <attempt>'   InvalidArgumentError
           'Heartbeat(): Job <jid> attempt <n> is stale: the job is on attempt <current>'
             StaleAttemptError
           cjson   InvalidArgumentError
]=]
Commands['job.heartbeat'] = function(D, now, jid, worker, data, attempt)
  if not D.attempts then attempt = nil end  -- (aqless's own argument: reqless names only)
  if attempt ~= nil then data = Helpers.given(data) end
  return Job.heartbeat(D, now, jid, worker, data, attempt)
end
