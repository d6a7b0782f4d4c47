--[=[ job.progress
  Args     jid, worker, fraction, [message], [attempt] (aqless's own: the job's code reports
           how far it got, see progress.lua; with the attempt, see Job.check_attempt)
  Reads    ql:j:<jid>
  Writes   ql:j:<jid> (progress, progress_message, progress_at), publishes ql:progress
  Returns  nil
  Errors   'Job(): no jid provided'   InvalidArgumentError
           'Progress(): Arg "worker" missing'   InvalidArgumentError
           'Progress(): Arg "fraction" not a number from 0 to 1: <fraction>'   InvalidArgumentError
           'Progress(): Arg "message" longer than 1024 bytes: <length>'   InvalidArgumentError
           'Progress(): Job <jid> does not exist'   JobNotFoundError
           'Progress(): Job <jid> not currently running: <state>'   LockLostError
           'Progress(): Job <jid> given out to another worker: <worker>'   LockLostError
           'Progress(): Arg "attempt" not a whole number: <attempt>'   InvalidArgumentError
           'Progress(): Job <jid> attempt <n> is stale: the job is on attempt <current>'
             StaleAttemptError
]=]
Commands['job.progress'] = function(D, now, jid, worker, fraction, message, attempt)
  Progress.report(now, jid, worker, fraction, message, attempt)
end
