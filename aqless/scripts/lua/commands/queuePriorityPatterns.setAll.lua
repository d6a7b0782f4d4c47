--[=[ queuePriorityPatterns.setAll
  Args     [pattern]...
  Reads    none
  Writes   ql:qp:priorities, qmore:priority (deleted)
  Returns  nil
  Errors   'queuePriorityPatterns.setAll(): each pattern must be a JSON object with a "pattern"'
             InvalidArgumentError
           cjson   InvalidArgumentError
]=]
Commands['queuePriorityPatterns.setAll'] = function(D, now, patterns)
  Patterns.set_priorities(patterns)
end
