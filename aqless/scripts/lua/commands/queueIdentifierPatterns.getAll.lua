--[=[ queueIdentifierPatterns.getAll
  Args     none
  Reads    ql:qp:identifiers, qmore:dynamic (legacy, standard prefix only)
  Writes   none
  Returns  JSON object: name -> JSON list text of patterns (default ["*"])
  Errors   none
]=]
Commands['queueIdentifierPatterns.getAll'] = function(D, now)
  return Helpers.json(Patterns.identifiers())
end
