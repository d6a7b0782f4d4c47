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
Commands['job.checkpoint'] = function(D, now, jid, worker, state, attempt)
  return Checkpoint.write(now, jid, worker, state, attempt)
end
