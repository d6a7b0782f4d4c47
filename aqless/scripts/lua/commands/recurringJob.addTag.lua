--[=[ recurringJob.addTag | recur.tag
  Args     jid, tag...
  Reads    ql:r:<jid>
  Writes   ql:r:<jid>
  Returns  JSON list of the template's tags (empty: classic {}, reqless [])
  Errors   'Recurring(): no jid provided'   InvalidArgumentError
           'Tag(): Job <jid> does not exist'   JobNotFoundError
]=]
Commands['recurringJob.addTag'] = function(D, now, jid, tags)
  return Recurring.add_tags(D, jid, tags)
end
