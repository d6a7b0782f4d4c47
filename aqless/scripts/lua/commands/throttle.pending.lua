--[=[ throttle.pending
  Args     tid
  Reads    ql:th:<tid>-pending
  Writes   none
  Returns  JSON list of the jids waiting for a slot ([] when none)
  Errors   'Throttle(): no tid provided'   InvalidArgumentError
]=]
Commands['throttle.pending'] = function(D, now, tid)
  Helpers.tid_given(tid)
  return json_array(Throttle.pending(tid))
end
