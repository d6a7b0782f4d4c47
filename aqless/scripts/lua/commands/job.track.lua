--[=[ job.track
  Args     jid
  Reads    ql:j:<jid>
  Writes   ql:tracked
  Returns  the number of members changed (0 or 1), as JSON text
  Errors   'Track(): Arg "jid" missing'   InvalidArgumentError
           'Track(): Job does not exist'   JobNotFoundError
]=]
Commands['job.track'] = function(D, now, jid)
  return Job.track(D, now, 'track', jid)
end
