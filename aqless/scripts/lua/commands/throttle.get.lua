--[=[ throttle.get
  Args     tid
  Reads    ql:th:<tid>
  Writes   none
  Returns  {"id": tid, "maximum": n, "ttl": seconds} (JSON)
  Errors   'Throttle(): no tid provided'   InvalidArgumentError
]=]
Commands['throttle.get'] = function(D, now, tid)
  Helpers.tid_given(tid)
  return Helpers.json(Throttle.info(tid))
end
