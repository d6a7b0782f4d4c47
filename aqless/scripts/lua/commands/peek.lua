--[=[ peek
  Args     queue, count
  Reads    ql:q:<q>-locks|work|scheduled|recur, ql:r:<id>, job objects
  Writes   ql:q:<q>-work|scheduled|recur, ql:j:<jid>, ql:j:<jid>-history, ql:r:<id>, ql:t:<tag>,
           ql:tags (recurring spawns and scheduled promotion)
  Returns  JSON list of the job objects a pop would take (empty: {})
  Errors   'Queue(): no queue name provided'   InvalidArgumentError
           'Peek(): Arg "count" missing or not a number: <count>'   InvalidArgumentError
]=]
Commands['peek'] = function(D, now, queue, count)
  return Queue.peek(D, now, queue, count)
end
