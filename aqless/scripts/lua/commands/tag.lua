--[=[ tag
  Args     add, jid, tag... | remove, jid, tag... | get, tag, [offset], [count] | top, [offset],
           [count]
  Reads    ql:j:<jid>, ql:t:<tag>, ql:tags
  Writes   ql:j:<jid>, ql:t:<tag>, ql:tags (add and remove)
  Returns  add, remove: JSON list of the job's tags; get: {"total": n, "jobs": [jids]}; top:
           JSON list of the tags at least two jobs carry
  Errors   'Tag(): Arg "command" must be "add", "remove", "get" or "top"'   InvalidArgumentError
           'Tag(): First argument must be "add", "remove" or "get"'   InvalidArgumentError
           'Tag(): Arg "jid" missing'   InvalidArgumentError
           'Tag(): Job <jid> does not exist'   JobNotFoundError
           'Tag(): Arg "tag" missing'   InvalidArgumentError
           'Tag(): Arg "offset" not a number: <offset>'   InvalidArgumentError
           'Tag(): Arg "count" not a number: {value}'   InvalidArgumentError
]=]
-- (`second` is the jid of add and remove, the tag of get, the offset of top)
Commands['tag'] = function(D, now, command, second, values)
  check(command, 'Tag(): Arg "command" must be "add", "remove", "get" or "top"')
  if command == 'add' then return Job.add_tags(D, now, second, values) end
  if command == 'remove' then return Job.remove_tags(D, now, second, values) end
  if command == 'get' then return Helpers.tagged(D, second, values[1], values[2]) end
  if command == 'top' then return Helpers.top_tags(D, second, values[1]) end
  raise('Tag(): First argument must be "add", "remove" or "get"')
end
