--[=[ job.getMulti | multiget
  Args     jid...
  Reads    job objects
  Writes   none
  Returns  JSON list of the objects of the jobs that exist (empty: classic {}, reqless [])
  Errors   none
]=]
Commands['job.getMulti'] = function(D, now, jids)
  return Job.list_json(D, jids)
end
