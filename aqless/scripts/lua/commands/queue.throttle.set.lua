--[=[ queue.throttle.set
  Args     queue, maximum
  Reads    none
  Writes   ql:th:<tid> (tid: the queue's throttle, ql:q:<q>), ql:throttles
  Returns  nil
  Errors   'Queue(): no queue name provided'   InvalidArgumentError
           'Throttle(): Arg "maximum" not a number: <maximum>'   InvalidArgumentError
           'Throttle(): Arg "maximum" must not be negative: <maximum>'   InvalidArgumentError
]=]
Commands['queue.throttle.set'] = function(D, now, queue, maximum)
  check(queue, 'Queue(): no queue name provided')
  Helpers.throttle_set(Keys.queue_throttle(queue), maximum, nil)
end
