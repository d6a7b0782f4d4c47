--[=[ queue.peek
  Args     queue, offset, limit
  Reads    ql:q:<q>-locks|work|scheduled|recur, ql:r:<id>, job objects
  Writes   ql:q:<q>-work|scheduled|recur, ql:j:<jid>, ql:j:<jid>-history, ql:r:<id>, ql:t:<tag>,
           ql:tags (recurring spawns and scheduled promotion)
  Returns  JSON list of the job objects a pop would take, from offset ([] when empty)
  Errors   'Queue(): no queue name provided'   InvalidArgumentError
           'Peek(): Arg "offset" missing or not a number: <offset>'   InvalidArgumentError
           'Peek(): Arg "limit" missing or not a number: <limit>'   InvalidArgumentError
]=]
Commands['queue.peek'] = function(D, now, queue, offset, limit)
  return Queue.peek_range(D, now, queue, offset, limit)
end
