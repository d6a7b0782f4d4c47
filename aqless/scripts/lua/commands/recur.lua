--[=[ recur
  Args     queue, jid, klass, data, interval, seconds, offset, [name, value]... (the word
           `interval`, then the interval; options: tags, priority, retries, backlog)
  Reads    ql:r:<jid>
  Writes   ql:r:<jid>, ql:q:<old queue>-recur, ql:q:<queue>-recur, ql:queues
  Returns  the jid
  Errors   'Queue(): no queue name provided'   InvalidArgumentError
           'RecurringJob On(): Arg "jid" missing'   InvalidArgumentError
           'RecurringJob On(): Arg "klass" missing'   InvalidArgumentError
           'RecurringJob On(): Arg "spec" missing'   InvalidArgumentError
           'RecurringJob On(): Arg "data" not JSON: {value}'   InvalidArgumentError
           'Recur(): schedule type "<type>" unknown'   InvalidArgumentError
           'Recur(): Arg "interval" not a number: <interval>'   InvalidArgumentError
           'Recur(): Arg "offset" not a number: <offset>'   InvalidArgumentError
           'Recur(): Arg "interval" must be greater than 0'   InvalidArgumentError
           'Odd number of additional args: {value}'   InvalidArgumentError
           'Recur(): Arg "tags" must be JSON string array: <tags>'   InvalidArgumentError
           'Recur(): Arg "priority" not a number: <priority>'   InvalidArgumentError
           'Recur(): Arg "retries" not a number: <retries>'   InvalidArgumentError
           'Recur(): Arg "backlog" not a number: <backlog>'   InvalidArgumentError
           'Recur(): Arg "backlog" must not be negative: <backlog>'   InvalidArgumentError
           cjson   InvalidArgumentError
]=]
Commands['recur'] = function(D, now, queue, jid, klass, data, interval, seconds, offset, a, first)
  return Recurring.recur(D, now, a)
end
