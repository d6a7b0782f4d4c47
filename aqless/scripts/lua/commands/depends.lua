--[=[ depends
  Args     jid, on, jid... | jid, off, jid... | jid, off, all
  Reads    ql:j:<jid>, ql:j:<dependency>, ql:j:<jid>-dependencies
  Writes   ql:j:<jid>-dependencies, ql:j:<dependency>-dependents, ql:j:<jid>,
           ql:q:<q>-depends|work (when the last dependency goes)
  Returns  1
  Errors   'Job(): no jid provided'   InvalidArgumentError
           'Depends(): Arg "command" missing'   InvalidArgumentError
           'Depends(): Job <jid> not in the depends state: <state>'   ScriptError
           'Depends(): Argument "command" must be "on" or "off"'   InvalidArgumentError
]=]
Commands['depends'] = function(D, now, jid, command, jids)
  return Job.depends(D, now, jid, command, jids)
end
