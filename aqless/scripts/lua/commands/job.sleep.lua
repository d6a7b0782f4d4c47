--[=[ job.sleep
  Args     jid, worker, attempt, data, until (aqless's own: a workflow stores its data and
           parks until a time, spending no retry; parked before its queue's other scheduled
           jobs, it publishes a put event, so an idle worker wakes for it on time)
  Reads    ql:j:<jid>
  Writes   ql:j:<jid>, ql:j:<jid>-history, ql:q:<q>-locks|scheduled, ql:w:<worker>:jobs,
           throttles
  Returns  scheduled
  Errors   'Job(): no jid provided'   InvalidArgumentError
           'Sleep(): Arg "worker" missing'   InvalidArgumentError
           'Sleep(): Arg "data" missing or not JSON: <data>'   InvalidArgumentError
           'Sleep(): Arg "until" not a number: <until>'   InvalidArgumentError
           'Sleep(): Job <jid> does not exist'   JobNotFoundError
           'Sleep(): Job <jid> is not currently running: <state>'   LockLostError
           'Sleep(): Job <jid> has been given to another worker: <worker>'   LockLostError
           'Sleep(): Arg "attempt" not a whole number: <attempt>'   InvalidArgumentError
           'Sleep(): Job <jid> attempt <n> is stale: the job is on attempt <current>'
             StaleAttemptError
]=]
Commands['job.sleep'] = function(D, now, jid, worker, attempt, data, at)
  return Job.sleep(now, jid, worker, attempt, data, at)
end
