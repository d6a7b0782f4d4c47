--[=[ job.awaitSignal
  Args     jid, worker, attempt, data, wait, signal, until (aqless's own: the workflow's wait
           of key `wait` takes the first signal named `signal` no wait took, or times out
           once `until` has passed, or stores the data and parks until `until` or the signal;
           a park as job.sleep's publishes a put event when it is due first)
  Reads    ql:j:<jid>
  Writes   ql:j:<jid>, ql:j:<jid>-history, ql:q:<q>-locks|scheduled, ql:w:<worker>:jobs,
           throttles
  Returns  the signal taken, as JSON text {"signal", "id", "at", "payload"}; timeout; or
           parked
  Errors   'Job(): no jid provided'   InvalidArgumentError
           'AwaitSignal(): Arg "wait" missing'   InvalidArgumentError
           'AwaitSignal(): Arg "signal" missing'   InvalidArgumentError
           'AwaitSignal(): Arg "until" not a number: <until>'   InvalidArgumentError
           'AwaitSignal(): Arg "worker" missing'   InvalidArgumentError
           'AwaitSignal(): Arg "data" missing or not JSON: <data>'   InvalidArgumentError
           'AwaitSignal(): Job <jid> does not exist'   JobNotFoundError
           'AwaitSignal(): Job <jid> is not currently running: <state>'   LockLostError
           'AwaitSignal(): Job <jid> has been given to another worker: <worker>'
             LockLostError
           'AwaitSignal(): Arg "attempt" not a whole number: <attempt>'   InvalidArgumentError
           'AwaitSignal(): Job <jid> attempt <n> is stale: the job is on attempt <current>'
             StaleAttemptError
]=]
Commands['job.awaitSignal'] = function(D, now, jid, worker, attempt, data, wait, signal, at)
  return Job.await_signal(now, jid, worker, attempt, data, wait, signal, at)
end
