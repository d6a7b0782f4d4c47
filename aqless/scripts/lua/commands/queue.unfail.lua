--[=[ queue.unfail | unfail
  Args     queue, group, [count]
  Reads    ql:f:<group>, ql:j:<jid>, ql:config
  Writes   ql:j:<jid>, ql:j:<jid>-history, ql:q:<queue>-work, ql:f:<group>, ql:failures
  Returns  integer, how many jobs moved
  Errors   'Queue(): no queue name provided'   InvalidArgumentError
           'queue.unfail(): Arg "queue" missing'   InvalidArgumentError
           'Unfail(): Arg "group" missing'   InvalidArgumentError
           'Unfail(): Arg "count" not a number: <count>'   InvalidArgumentError
           'Unfail(): Arg "count" must be greater than zero'   InvalidArgumentError
]=]
Commands['queue.unfail'] = function(D, now, queue, group, count)
  return Queue.unfail(D, now, queue, group, count)
end
