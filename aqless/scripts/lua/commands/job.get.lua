--[=[ job.get | get
  Args     jid
  Reads    job objects
  Writes   none
  Returns  the job object (JSON), or nil
  Errors   'Job(): no jid provided'   InvalidArgumentError
]=]
Commands['job.get'] = function(D, now, jid)
  check(jid, 'Job(): no jid provided')
  return Job.json(D, jid)
end
