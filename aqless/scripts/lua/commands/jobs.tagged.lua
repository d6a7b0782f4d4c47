--[=[ jobs.tagged
  Args     tag, [offset], [limit]
  Reads    ql:t:<tag>
  Writes   none
  Returns  {"total": n, "jobs": [jids]} (JSON)
  Errors   'Tag(): Arg "tag" missing'   InvalidArgumentError
           'Tag(): Arg "offset" not a number: <offset>'   InvalidArgumentError
           'Tag(): Arg "limit" not a number: {value}'   InvalidArgumentError
]=]
Commands['jobs.tagged'] = function(D, now, tag, offset, limit)
  return Helpers.tagged(D, tag, offset, limit)
end
