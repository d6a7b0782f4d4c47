--[=[ jobs
  Args     state, queue, [offset], [count] | complete, [offset], [count] (state: running,
           stalled, scheduled, depends, recurring)
  Reads    ql:completed, ql:q:<q>-locks|scheduled|depends|recur
  Writes   ql:q:<q>-scheduled|work, ql:j:<jid> (state scheduled promotes due jobs first)
  Returns  a list of jids
  Errors   'Jobs(): Arg "state" missing'   InvalidArgumentError
           'Jobs(): Arg "queue" missing'   InvalidArgumentError
           'Jobs(): Arg "offset" not a number: <offset>'   InvalidArgumentError
           'Jobs(): Arg "count" not a number: {value}'   InvalidArgumentError
           'Jobs(): Unknown type "<state>"'   InvalidArgumentError
]=]
-- (complete names no queue: its offset and count come second and third)
Commands['jobs'] = function(D, now, state, queue, offset, count)
  check(state, 'Jobs(): Arg "state" missing')
  if state == 'complete' then return Queue.completed(Helpers.jobs_page(D, queue, offset)) end
  return Helpers.jobs_by_state(D, now, state, queue, offset, count)
end
