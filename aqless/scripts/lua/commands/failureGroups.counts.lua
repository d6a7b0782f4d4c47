--[=[ failureGroups.counts
  Args     [start], [limit] (checked, then ignored)
  Reads    ql:failures, ql:f:<group>
  Writes   none
  Returns  {group: count} (JSON)
  Errors   'Failed(): Arg "start" is not a number: <start>'   InvalidArgumentError
           'Failed(): Arg "limit" is not a number: <limit>'   InvalidArgumentError
]=]
Commands['failureGroups.counts'] = function(D, now, start, limit)
  Helpers.failed_page(start, limit)
  return Helpers.json(Queue.failure_groups())
end
