--[=[ job.removeDependency
  Args     jid, jid... | jid, all
  Reads    ql:j:<jid>, ql:j:<jid>-dependencies
  Writes   ql:j:<jid>-dependencies, ql:j:<dependency>-dependents, ql:j:<jid>,
           ql:q:<q>-depends|work (when the last dependency goes)
  Returns  1
  Errors   'Job(): no jid provided'   InvalidArgumentError
           'Depends(): Job <jid> not in the depends state: <state>'   ScriptError
]=]
Commands['job.removeDependency'] = function(D, now, jid, jids)
  return Job.depends(D, now, jid, 'off', jids)
end
