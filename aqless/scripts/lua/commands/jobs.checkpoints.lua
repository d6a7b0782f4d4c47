--[=[ jobs.checkpoints
  Args     jid... (aqless's own: what job.checkpoint stored)
  Reads    ql:j:<jid>
  Writes   none
  Returns  JSON object {jid: state} of the jobs that hold a checkpoint ({} when none)
  Errors   none
]=]
Commands['jobs.checkpoints'] = function(D, now, jids)
  return Checkpoint.of(jids)
end
