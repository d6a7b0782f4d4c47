-- One job at a time (aqless's own, `queue.popAfter`): a worker's outcome for the job it ran
-- and its pop of the next, in one call. A script call has a fixed cost of its own, which a
-- worker with one slot pays twice per job when the two go as calls of their own.
--
-- The outcome runs as its own command would, with its own `now` and arguments, then the
-- pop as `queue.pop`: the keys, replies and events are those of the two calls sent one
-- after the other. A refused outcome (the job is no longer the worker's) does not stop the
-- pop, as it would not have stopped the pop sent behind it: its error text is the reply's.

-- The commands a worker reports an outcome with (the reqless vocabulary's).
local POP_AFTER_OUTCOMES = {
  ['job.complete'] = true, ['job.completeAndRequeue'] = true, ['job.fail'] = true,
  ['job.retry'] = true, ['job.requeue'] = true,
}

-- `a`: queue, worker, limit, command, the command's now, its arguments...; `find`: the
-- handler of a command name. Returns {the pop's reply, 'ok' or 'refused', the outcome's
-- reply or the text of its refusal}.
function Queue.pop_after(now, a, find)
  local queue, worker, limit, command, at = a[1], a[2], a[3], a[4], a[5]
  local count = Queue.pop_count(RELESS, queue, worker, limit)
  check(POP_AFTER_OUTCOMES[command], 'PopAfter(): Arg "command" not an outcome: '
    .. tostring(command))
  local outcome_now = number(at)
  check(outcome_now, 'PopAfter(): Arg "now" not a number: ' .. tostring(at))
  local arguments = {n = math.max(0, a.n - 5)}
  for i = 6, a.n do arguments[i - 5] = a[i] end
  local done, reply = pcall(find(command), outcome_now, arguments)
  if not done and type(reply) ~= 'string' then
    error(reply)  -- the server's refusal of a command the outcome ran (an ACL, memory)
  end
  -- the per-call caches (configuration, tracking, throttle maximums) hold nothing an
  -- outcome changes: the pop reads what it would read in a call of its own
  local popped = Job.list_json(RELESS, Queue.pop_jids(RELESS, now, queue, worker, count))
  return {popped, done and 'ok' or 'refused', reply}
end
