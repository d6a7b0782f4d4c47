--[=[ queuePriorityPatterns.getAll
  Args     none
  Reads    ql:qp:priorities, qmore:priority (legacy, standard prefix only)
  Writes   none
  Returns  JSON list of the pattern objects' texts (a default one when none)
  Errors   none
]=]
Commands['queuePriorityPatterns.getAll'] = function(D, now)
  return Helpers.json(Patterns.priorities())
end
