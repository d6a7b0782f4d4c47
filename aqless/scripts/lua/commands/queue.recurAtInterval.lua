--[=[ queue.recurAtInterval
  Args     queue, jid, klass, data, interval, offset, [name, value]... (options: tags, priority,
           retries, backlog, throttles; aqless's own: overlap, catchup, pause_after, jitter)
  Reads    ql:r:<jid>
  Writes   ql:r:<jid>, ql:q:<old queue>-recur, ql:q:<queue>-recur, ql:queues
  Returns  the jid
  Errors   'Queue(): no queue name provided'   InvalidArgumentError
           'Recur(): Arg "jid" missing'   InvalidArgumentError
           'Recur(): Arg "klass" missing'   InvalidArgumentError
           'Recur(): Arg "data" not JSON: {value}'   InvalidArgumentError
           'Recur(): Arg "interval" not a number: <interval>'   InvalidArgumentError
           'Recur(): Arg "offset" not a number: <offset>'   InvalidArgumentError
           'Recur(): Arg "interval" must be greater than 0'   InvalidArgumentError
           'Recur(): Odd number of additional args: {value}'   InvalidArgumentError
           'Recur(): Arg "tags" must be JSON string array: <tags>'   InvalidArgumentError
           'Recur(): Arg "priority" not a number: <priority>'   InvalidArgumentError
           'Recur(): Arg "retries" not a number: <retries>'   InvalidArgumentError
           'Recur(): Arg "backlog" not a number: <backlog>'   InvalidArgumentError
           'Recur(): Arg "backlog" must not be negative: <backlog>'   InvalidArgumentError
           'Recur(): Arg "throttles" not JSON array: <throttles>'   InvalidArgumentError
           'Recur(): Arg "overlap" must be one of skip, buffer_one, buffer_all, cancel_other, allow_all: <value>'   InvalidArgumentError
           'Recur(): Arg "<name>" must be a number from 0: <value>'   InvalidArgumentError
           cjson   InvalidArgumentError
]=]
Commands['queue.recurAtInterval'] = function(D, now, queue, jid, klass, data, interval, offset, a, first)
  return Recurring.recur(D, now, a)
end
