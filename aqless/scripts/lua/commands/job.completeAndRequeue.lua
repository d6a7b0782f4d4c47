--[=[ job.completeAndRequeue
  Args     jid, worker, queue, data, next, [name, value]... (options: delay, depends; aqless's
           own: keep_data and attempt, as job.complete's)
  Reads    ql:j:<jid>, ql:j:<dependency>, ql:tracked, ql:config, throttles
  Writes   ql:j:<jid>, ql:j:<jid>-history, <q>-*, throttles, ql:s:run:<bin>:<q>,
           ql:aqless:tp:<hour>:<q>, ql:w:<worker>:jobs, ql:queues,
           ql:q:<next>-work|scheduled|depends,
           ql:j:<jid>-dependencies, ql:j:<dependency>-dependents
  Returns  the new state: waiting, scheduled or depends
  Errors   'Job(): no jid provided'   InvalidArgumentError
           'Complete(): Arg "worker" missing'   InvalidArgumentError
           'Complete(): Arg "queue_name" missing'   InvalidArgumentError
           'Complete(): Arg "data" missing or not JSON: <data>'   InvalidArgumentError
           'assertion failed!'   InvalidArgumentError
           'Complete(): Arg "depends" not JSON: <depends>'   InvalidArgumentError
           'Complete(): Arg "next" empty'   InvalidArgumentError
           'Complete(): Job does not exist'   JobNotFoundError
           'Complete(): Job is not currently running: {state}'   LockLostError
           'Complete(): Job has been handed out to another worker: {worker}'   LockLostError
           'Complete(): Job running in another queue: {queue}'   InvalidArgumentError
           'Complete(): Arg "attempt" not a whole number: <attempt>'   InvalidArgumentError
           'Complete(): Job <jid> attempt <n> is stale: the job is on attempt <current>'
             StaleAttemptError
           cjson   InvalidArgumentError
]=]
Commands['job.completeAndRequeue'] = function(D, now, jid, worker, queue, data, next_queue, a, first)
  local o = options(a, first)
  if o == NOTHING then o = {} end
  o.next = next_queue
  local attempt = o.attempt
  o.attempt = nil
  return Job.complete(D, now, jid, worker, queue, data, o, o.keep_data ~= nil, attempt)
end
