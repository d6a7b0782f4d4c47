--[=[ jobs.tracked
  Args     none
  Reads    ql:tracked, job objects
  Writes   none
  Returns  {"jobs": [job objects], "expired": [jids]} (JSON)
  Errors   none
]=]
Commands['jobs.tracked'] = function(D, now)
  return Job.tracked(D)
end
