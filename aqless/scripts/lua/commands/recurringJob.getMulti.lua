--[=[ recurringJob.getMulti
  Args     jid...
  Reads    ql:r:<jid>
  Writes   none
  Returns  JSON list of the recurring objects of the templates that exist, in order ([]
           when none)
  Errors   none
]=]
Commands['recurringJob.getMulti'] = function(D, now, jids)
  return Recurring.get_many(D, jids)
end
