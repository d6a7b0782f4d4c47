--[=[ jobs.failedByGroup | failed
  Args     group, [start], [limit] | none
  Reads    ql:failures, ql:f:<group>
  Writes   none
  Returns  none given: {group: count}; else {"total": n, "jobs": [jids]}
  Errors   'Failed(): Arg "start" is not a number: <start>'   InvalidArgumentError
           'Failed(): Arg "limit" is not a number: <limit>'   InvalidArgumentError
]=]
Commands['jobs.failedByGroup'] = function(D, now, group, start, limit)
  if group == nil then return Helpers.json(Queue.failure_groups()) end
  start, limit = Helpers.failed_page(start, limit)
  return Helpers.json(Queue.failed_in_group(group, start, limit))
end
