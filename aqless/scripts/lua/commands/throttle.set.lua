--[=[ throttle.set
  Args     tid, maximum, [expiration]
  Reads    none
  Writes   ql:th:<tid>, ql:throttles
  Returns  nil
  Errors   'Throttle(): no tid provided'   InvalidArgumentError
           'Throttle(): Arg "maximum" not a number: <maximum>'   InvalidArgumentError
           'Throttle(): Arg "maximum" must not be negative: <maximum>'   InvalidArgumentError
           'Throttle(): Arg "expiration" not a number: <expiration>'   InvalidArgumentError
]=]
Commands['throttle.set'] = function(D, now, tid, maximum, expiration)
  Helpers.throttle_set(tid, maximum, expiration)
end
