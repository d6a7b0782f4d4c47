--[=[ recurringJob.removeTag | recur.untag
  Args     jid, tag...
  Reads    ql:r:<jid>
  Writes   ql:r:<jid>
  Returns  JSON list of the template's tags (empty: {})
  Errors   'Recurring(): no jid provided'   InvalidArgumentError
           'Untag(): Job <jid> does not exist'   JobNotFoundError
]=]
Commands['recurringJob.removeTag'] = function(D, now, jid, tags)
  return Recurring.remove_tags(D, jid, tags)
end
