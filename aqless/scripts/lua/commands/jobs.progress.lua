--[=[ jobs.progress
  Args     jid... (aqless's own: what job.progress stored)
  Reads    ql:j:<jid>
  Writes   none
  Returns  JSON object {jid: {"fraction", "message", "at"}} of the jobs that reported progress
           ({} when none)
  Errors   none
]=]
Commands['jobs.progress'] = function(D, now, jids)
  return Progress.of(jids)
end
