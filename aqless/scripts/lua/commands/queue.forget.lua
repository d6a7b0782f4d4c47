--[=[ queue.forget
  Args     queue...
  Reads    none
  Writes   ql:queues
  Returns  nil
  Errors   '<Forget>(): wrong number of arguments: give at least one name'   InvalidArgumentError
]=]
Commands['queue.forget'] = function(D, now, queues)
  Queue.forget(queues)
end
