--[=[ queue.pop | pop
  Args     queue, worker, count (reqless: limit)
  Reads    ql:paused_queues, ql:config, <q>-*, ql:q:<q>-recur, ql:r:<id>, job objects, throttles
  Writes   ql:workers, ql:w:<worker>:jobs, <q>-*, ql:j:<jid>, ql:j:<jid>-history, throttles,
           ql:s:wait:<bin>:<q>, ql:s:stats:<bin>:<q>, ql:aqless:tp:<hour>:<q>, ql:f:<group>,
           ql:failures (expired locks),
           ql:r:<id>, ql:q:<q>-recur, ql:t:<tag>, ql:tags (recurring spawns)
  Returns  JSON list of the popped job objects (classic writes an empty one {}, reqless [])
  Errors   'Queue(): no queue name provided'   InvalidArgumentError
           'Pop(): Arg "worker" missing'   InvalidArgumentError
           'Pop(): Arg "count" missing or not a number: {value}'   InvalidArgumentError
           'Pop(): Arg "limit" missing or not a number: {value}'   InvalidArgumentError
]=]
Commands['queue.pop'] = function(D, now, queue, worker, limit)
  return Queue.pop(D, now, queue, worker, limit)
end
