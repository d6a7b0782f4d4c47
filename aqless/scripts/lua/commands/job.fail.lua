--[=[ job.fail | fail
  Args     jid, worker, group, message, [data], [attempt] (aqless's own, job.fail only: see
           Job.check_attempt; with it, data '' is none)
  Reads    ql:j:<jid>, ql:tracked, ql:config
  Writes   ql:j:<jid>, ql:j:<jid>-history, ql:w:<worker>:jobs, <q>-*, throttles,
           ql:s:stats:<bin>:<q>, ql:aqless:tp:<hour>:<q>, ql:failures, ql:f:<group>
  Returns  the jid
  Errors   'Job(): no jid provided'   InvalidArgumentError
           'Fail(): Arg "worker" missing'   InvalidArgumentError
           'Fail(): Arg "group" missing'   InvalidArgumentError
           'Fail(): Arg "group" empty'   InvalidArgumentError
           'Fail(): Arg "message" missing'   InvalidArgumentError
           'Fail(): Job {jid}does not exist'   JobNotFoundError
           'Fail(): Job {jid}not currently running: {state}'   LockLostError
           'Fail(): Job {jid} running with another worker: {worker}'   LockLostError
           'Fail(): Job does not exist'   JobNotFoundError
           'Fail(): Job not currently running: {state}'   LockLostError
           'Fail(): Job running with another worker: {worker}'   LockLostError
           'Fail(): Arg "attempt" not a whole number: <attempt>'   InvalidArgumentError
           'Fail(): Job <jid> attempt <n> is stale: the job is on attempt <current>'
             StaleAttemptError
           cjson   InvalidArgumentError
]=]
Commands['job.fail'] = function(D, now, jid, worker, group, message, data, attempt)
  if not D.attempts then attempt = nil end  -- (aqless's own argument: reqless names only)
  if attempt ~= nil then data = Helpers.given(data) end
  return Job.fail(D, now, jid, worker, group, message, data, attempt)
end
