--[=[ throttle.index
  Args     tid...
  Reads    ql:th:<tid>
  Writes   ql:throttles
  Returns  the number of ids added to the index (those with a record, not indexed yet)
  Errors   none
]=]
Commands['throttle.index'] = function(D, now, tids)
  return Throttle.adopt(tids)
end
