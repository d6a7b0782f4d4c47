--[=[ recurringJob.cancel | unrecur
  Args     jid
  Reads    ql:r:<jid>
  Writes   ql:q:<q>-recur, ql:r:<jid> (deleted)
  Returns  1
  Errors   'Recurring(): no jid provided'   InvalidArgumentError
]=]
Commands['recurringJob.cancel'] = function(D, now, jid)
  return Recurring.cancel(jid)
end
