--[=[ job.addTag
  Args     jid, tag...
  Reads    ql:j:<jid>
  Writes   ql:j:<jid>, ql:t:<tag>, ql:tags
  Returns  JSON list of the job's tags ([] when empty)
  Errors   'Tag(): Arg "jid" missing'   InvalidArgumentError
           'Tag(): Job <jid> does not exist'   JobNotFoundError
           'Tag(): Arg "tag" empty'   InvalidArgumentError
]=]
Commands['job.addTag'] = function(D, now, jid, tags)
  return Job.add_tags(D, now, jid, tags)
end
