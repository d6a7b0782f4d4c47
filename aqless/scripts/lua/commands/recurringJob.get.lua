--[=[ recurringJob.get | recur.get
  Args     jid
  Reads    ql:r:<jid>
  Writes   none
  Returns  the recurring-job object (JSON; reqless adds "throttles"), or nil
  Errors   'Recurring(): no jid provided'   InvalidArgumentError
]=]
Commands['recurringJob.get'] = function(D, now, jid)
  return Helpers.object_or_nil(Recurring.object(D, jid))
end
