--[=[ job.addDependency
  Args     jid, jid...
  Reads    ql:j:<jid>, ql:j:<dependency>
  Writes   ql:j:<jid>-dependencies, ql:j:<dependency>-dependents
  Returns  1
  Errors   'Job(): no jid provided'   InvalidArgumentError
           'Depends(): Job <jid> not in the depends state: <state>'   ScriptError
]=]
Commands['job.addDependency'] = function(D, now, jid, jids)
  return Job.depends(D, now, jid, 'on', jids)
end
