--[=[ queue.pause | pause
  Args     queue...
  Reads    none
  Writes   ql:paused_queues
  Returns  nil
  Errors   '<Pause>(): wrong number of arguments: give at least one name'   InvalidArgumentError
]=]
Commands['queue.pause'] = function(D, now, queues)
  Queue.pause(queues)
end
