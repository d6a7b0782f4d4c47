--[=[ queue.jobsByState
  Args     state, queue, [offset], [limit] | complete, [offset], [limit] (state: running,
           stalled, scheduled, depends, throttled, recurring)
  Reads    ql:completed, ql:q:<q>-locks|scheduled|depends|throttled|recur
  Writes   ql:q:<q>-scheduled|work, ql:j:<jid> (state scheduled promotes due jobs first)
  Returns  JSON list of jids ([] when empty)
  Errors   'Jobs(): Arg "state" missing'   InvalidArgumentError
           'Jobs(): Arg "queue" missing'   InvalidArgumentError
           'Jobs(): Arg "offset" not a number: <offset>'   InvalidArgumentError
           'Jobs(): Arg "limit" not a number: {value}'   InvalidArgumentError
           'Jobs(): Unknown type "<state>"'   InvalidArgumentError
]=]
-- (complete names no queue: its offset and limit come second and third)
Commands['queue.jobsByState'] = function(D, now, state, queue, offset, limit)
  check(state, 'Jobs(): Arg "state" missing')
  if state == 'complete' then
    return json_array(Queue.completed(Helpers.jobs_page(D, queue, offset)))
  end
  return json_array(Helpers.jobs_by_state(D, now, state, queue, offset, limit))
end
