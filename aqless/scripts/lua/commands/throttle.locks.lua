--[=[ throttle.locks
  Args     tid
  Reads    ql:th:<tid>-locks
  Writes   none
  Returns  JSON list of the jids holding a slot ([] when none)
  Errors   'Throttle(): no tid provided'   InvalidArgumentError
]=]
Commands['throttle.locks'] = function(D, now, tid)
  Helpers.tid_given(tid)
  return json_array(Throttle.locks(tid))
end
