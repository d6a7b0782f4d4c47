--[=[ queue.length | length
  Args     queue
  Reads    ql:q:<q>-locks|work|scheduled
  Writes   none
  Returns  integer, the jobs running, waiting and scheduled
  Errors   'Queue(): no queue name provided'   InvalidArgumentError
]=]
Commands['queue.length'] = function(D, now, queue)
  return Queue.length(now, queue)
end
