--[=[ job.retry | retry
  Args     jid, queue, worker, [delay], [group], [message], [attempt] (aqless's own, job.retry
           only: see Job.check_attempt; with it, group and message '' are none)
  Reads    ql:j:<jid>, ql:tracked, ql:config
  Writes   ql:j:<jid>, ql:j:<jid>-history, ql:q:<q>-locks, ql:w:<worker>:jobs, throttles,
           ql:q:<queue>-work|scheduled; when no retry is left: ql:failures, ql:f:<group>,
           ql:s:stats:<bin>:<queue>, ql:aqless:tp:<hour>:<queue>
  Returns  integer, the retries left (below 0: the job failed)
  Errors   'Job(): no jid provided'   InvalidArgumentError
           'Retry(): Arg "queue" missing'   InvalidArgumentError
           'Retry(): Arg "queue_name" missing'   InvalidArgumentError
           'Retry(): Arg "worker" missing'   InvalidArgumentError
           'Retry(): Arg "delay" not a number: <delay>'   InvalidArgumentError
           'Retry(): Arg "group" empty'   InvalidArgumentError
           'Retry(): Job {jid} does not exist'   JobNotFoundError
           'Retry(): Job {jid} is not currently running: {state}'   LockLostError
           'Retry(): Job {jid} has been given to another worker: {worker}'   LockLostError
           'Retry(): Job does not exist'   JobNotFoundError
           'Retry(): Job is not currently running: {state}'   LockLostError
           'Retry(): Job has been given to another worker: {worker}'   LockLostError
           'Retry(): Arg "attempt" not a whole number: <attempt>'   InvalidArgumentError
           'Retry(): Job <jid> attempt <n> is stale: the job is on attempt <current>'
             StaleAttemptError
]=]
Commands['job.retry'] = function(D, now, jid, queue, worker, delay, group, message, attempt)
  if not D.attempts then attempt = nil end  -- (aqless's own argument: reqless names only)
  if attempt ~= nil then group, message = Helpers.given(group), Helpers.given(message) end
  return Job.retry(D, now, jid, queue, worker, delay, group, message, attempt)
end
