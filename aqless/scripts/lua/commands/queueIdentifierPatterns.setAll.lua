--[=[ queueIdentifierPatterns.setAll
  Args     [name, patterns]...
  Reads    none
  Writes   ql:qp:identifiers, qmore:dynamic (deleted)
  Returns  nil
  Errors   'Odd number of identifier patterns: <n> arguments'   InvalidArgumentError
           'queueIdentifierPatterns.setAll(): patterns of "<name>" must be a JSON list'
             InvalidArgumentError
           cjson   InvalidArgumentError
]=]
Commands['queueIdentifierPatterns.setAll'] = function(D, now, a, first)
  Patterns.set_identifiers(a)
end
