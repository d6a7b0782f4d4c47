--[=[ job.removeTag
  Args     jid, tag...
  Reads    ql:j:<jid>, ql:t:<tag>
  Writes   ql:j:<jid>, ql:t:<tag>, ql:tags
  Returns  JSON list of the job's tags ([] when empty)
  Errors   'Tag(): Arg "jid" missing'   InvalidArgumentError
           'Tag(): Job <jid> does not exist'   JobNotFoundError
]=]
Commands['job.removeTag'] = function(D, now, jid, tags)
  return Job.remove_tags(D, now, jid, tags)
end
