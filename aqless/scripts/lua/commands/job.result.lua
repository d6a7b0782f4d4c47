--[=[ job.result
  Args     jid (aqless's own: the job's kept return value, see results.lua)
  Reads    ql:j:<jid>
  Writes   none
  Returns  JSON {"state", "result" (the stored JSON text), "dropped" (why none was kept),
           "failure"}, the last three when present; nil when the job does not exist
  Errors   'Job(): no jid provided'   InvalidArgumentError
]=]
Commands['job.result'] = function(D, now, jid)
  return Results.json(jid)
end
