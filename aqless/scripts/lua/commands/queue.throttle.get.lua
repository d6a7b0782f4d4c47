--[=[ queue.throttle.get
  Args     queue
  Reads    ql:th:<tid> (tid: the queue's throttle, ql:q:<q>)
  Writes   none
  Returns  {"id": tid, "maximum": n, "ttl": seconds} (JSON)
  Errors   'Queue(): no queue name provided'   InvalidArgumentError
]=]
Commands['queue.throttle.get'] = function(D, now, queue)
  check(queue, 'Queue(): no queue name provided')
  return Helpers.json(Throttle.info(Keys.queue_throttle(queue)))
end
