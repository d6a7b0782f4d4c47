--[=[ jobs.completed
  Args     [offset], [limit]
  Reads    ql:completed
  Writes   none
  Returns  JSON list of jids, most recently completed first ([] when empty)
  Errors   'Jobs(): Arg "offset" not a number: <offset>'   InvalidArgumentError
           'Jobs(): Arg "limit" not a number: {value}'   InvalidArgumentError
]=]
Commands['jobs.completed'] = function(D, now, offset, limit)
  return json_array(Queue.completed(Helpers.jobs_page(D, offset, limit)))
end
