--[=[ queue.unpause | unpause
  Args     queue...
  Reads    none
  Writes   ql:paused_queues
  Returns  nil
  Errors   '<Unpause>(): wrong number of arguments: give at least one name'   InvalidArgumentError
]=]
Commands['queue.unpause'] = function(D, now, queues)
  Queue.unpause(queues)
end
