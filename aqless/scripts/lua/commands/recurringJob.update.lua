--[=[ recurringJob.update | recur.update
  Args     jid, [name, value]... (names: priority, interval, retries, backlog, data, klass,
           queue; throttles for reqless; aqless's own: overlap, catchup, pause_after, jitter,
           paused 0 or 1, see schedules.lua)
  Reads    ql:r:<jid>, ql:q:<q>-recur
  Writes   ql:r:<jid>, ql:q:<q>-recur, ql:q:<new queue>-recur, ql:queues
  Returns  1
  Errors   'Recurring(): no jid provided'   InvalidArgumentError
           'Recur(): No recurring job <jid>'   JobNotFoundError
           'No value provided for <name>'   InvalidArgumentError
           'Recur(): Arg "<name>" must be a number: <value>'   InvalidArgumentError
           'Recur(): Arg "interval" must be greater than 0'   InvalidArgumentError
           'Recur(): Arg "backlog" not a number: <value>'   InvalidArgumentError
           'Recur(): Arg "backlog" must not be negative: <value>'   InvalidArgumentError
           'Recur(): Arg "data" is not JSON-encoded: <value>'   InvalidArgumentError
           'Recur(): Arg "throttles" is not JSON-encoded: <value>'   InvalidArgumentError
           'Recur(): Arg "overlap" must be one of skip, buffer_one, buffer_all, cancel_other, allow_all: <value>'   InvalidArgumentError
           'Recur(): Arg "<name>" must be a number from 0: <value>'   InvalidArgumentError
           'Recur(): Arg "paused" must be 0 or 1: <value>'   InvalidArgumentError
           'Recur(): Unrecognized option "<name>"'   InvalidArgumentError
           cjson   InvalidArgumentError
]=]
Commands['recurringJob.update'] = function(D, now, jid, a, first)
  return Recurring.update(D, now, a)
end
