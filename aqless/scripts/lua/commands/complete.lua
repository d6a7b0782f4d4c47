--[=[ complete
  Args     jid, worker, queue, data, [name, value]... (options: next, delay, depends; aqless's
           own, without next: result, result_dropped)
  Reads    ql:j:<jid>, ql:j:<jid>-dependents, ql:tracked, ql:config, ql:completed, throttles
  Writes   ql:j:<jid>, ql:j:<jid>-history, <q>-*, throttles, ql:s:run:<bin>:<q>,
           ql:aqless:tp:<hour>:<q>, ql:w:<worker>:jobs, ql:completed, ql:aqless:retention,
           the released dependents' ql:j:<dependent>,
           ql:j:<dependent>-dependencies and queue sets; retention deletes old jobs' ql:j:<old>,
           ql:j:<old>-history, ql:t:<tag>, ql:tags; with next: ql:queues,
           ql:q:<next>-work|scheduled|depends, ql:j:<jid>-dependencies,
           ql:j:<dependency>-dependents
  Returns  the new state: complete; with next: waiting, scheduled or depends
  Errors   'Job(): no jid provided'   InvalidArgumentError
           'Complete(): Arg "worker" missing'   InvalidArgumentError
           'Complete(): Arg "queue" missing'   InvalidArgumentError
           'Complete(): Arg "data" missing or not JSON: <data>'   InvalidArgumentError
           'assertion failed!'   InvalidArgumentError
           'Complete(): Arg "depends" not JSON: <depends>'   InvalidArgumentError
           'Complete(): Arg "next" empty'   InvalidArgumentError
           'Complete(): "delay" cannot be used without a "next".'   InvalidArgumentError
           'Complete(): "depends" cannot be used without a "next".'   InvalidArgumentError
           'Complete(): Job {jid} does not exist'   JobNotFoundError
           'Complete(): Job {jid} is not currently running: {state}'   LockLostError
           'Complete(): Job {jid} has been handed out to another worker: {worker}'   LockLostError
           'Complete(): Job {jid} running in another queue: {queue}'   InvalidArgumentError
           'Complete(): "result" cannot be used with a "next".'   InvalidArgumentError
           'Complete(): Arg "result" not JSON'   InvalidArgumentError
           cjson   InvalidArgumentError
]=]
Commands['complete'] = function(D, now, jid, worker, queue, data, a, first)
  return Job.complete(D, now, jid, worker, queue, data, options(a, first))
end
