--[=[ tags.top
  Args     [offset], [limit]
  Reads    ql:tags
  Writes   none
  Returns  JSON list of the tags at least two jobs carry, most used first ([] when empty)
  Errors   'Tag(): Arg "offset" not a number: <offset>'   InvalidArgumentError
           'Tag(): Arg "limit" not a number: {value}'   InvalidArgumentError
]=]
Commands['tags.top'] = function(D, now, offset, limit)
  return Helpers.top_tags(D, offset, limit)
end
