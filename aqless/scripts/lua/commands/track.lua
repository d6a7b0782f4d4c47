--[=[ track
  Args     track, jid | untrack, jid | none
  Reads    ql:tracked, job objects
  Writes   ql:tracked
  Returns  none given: {"jobs": [job objects], "expired": [jids]}; else the number of members
           changed, as JSON text
  Errors   'Track(): Arg "jid" missing'   InvalidArgumentError
           'Track(): Job does not exist'   JobNotFoundError
           'Track(): Unknown action "<action>"'   InvalidArgumentError
]=]
Commands['track'] = function(D, now, action, jid)
  if action == nil then return Job.tracked(D) end
  return Job.track(D, now, action, jid)
end
