--[=[ job.handBack
  Args     jid, worker, reason, [attempt] (aqless's own: a worker gives back a job it was told
           to stop, spending no retry)
  Reads    ql:j:<jid>
  Writes   ql:j:<jid>, ql:j:<jid>-history, ql:q:<q>-locks|work, ql:w:<worker>:jobs, throttles
  Returns  waiting
  Errors   'Job(): no jid provided'   InvalidArgumentError
           'HandBack(): Arg "worker" missing'   InvalidArgumentError
           'HandBack(): Arg "reason" missing'   InvalidArgumentError
           'HandBack(): Arg "reason" empty'   InvalidArgumentError
           'HandBack(): Job <jid> does not exist'   JobNotFoundError
           'HandBack(): Job <jid> is not currently running: <state>'   LockLostError
           'HandBack(): Job <jid> has been given to another worker: <worker>'   LockLostError
           'HandBack(): Arg "attempt" not a whole number: <attempt>'   InvalidArgumentError
           'HandBack(): Job <jid> attempt <n> is stale: the job is on attempt <current>'
             StaleAttemptError
]=]
Commands['job.handBack'] = function(D, now, jid, worker, reason, attempt)
  return Job.hand_back(now, jid, worker, reason, attempt)
end
