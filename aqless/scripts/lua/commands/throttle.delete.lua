--[=[ throttle.delete
  Args     tid
  Reads    none
  Writes   ql:th:<tid> (deleted), ql:throttles
  Returns  nil
  Errors   'Throttle(): no tid provided'   InvalidArgumentError
]=]
Commands['throttle.delete'] = function(D, now, tid)
  Helpers.tid_given(tid)
  Throttle.delete(tid)
  Throttle.index_remove(tid)
end
