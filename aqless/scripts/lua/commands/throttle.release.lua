--[=[ throttle.release
  Args     tid, jid...
  Reads    throttles, ql:j:<jid>
  Writes   ql:th:<tid>-locks|-pending, ql:q:<q>-throttled|work
  Returns  nil
  Errors   'Throttle(): no tid provided'   InvalidArgumentError
]=]
Commands['throttle.release'] = function(D, now, tid, jids)
  Helpers.tid_given(tid)
  for _, jid in ipairs(jids) do Throttle.release(tid, jid, now) end
end
