--[=[ queue.upsertRecurring
  Args     queue, jid, klass, data, interval, offset, [name, value]... (aqless's own: as
           queue.recurAtInterval, with the options cron, tz, refill and times, a JSON list
           of fire times, as recurringJob.setCron's; the policy options overlap, catchup,
           pause_after and jitter as recurringJob.update's)
  Reads    ql:r:<jid>, ql:q:<old queue>-recur
  Writes   ql:r:<jid>, ql:q:<old queue>-recur, ql:q:<queue>-recur, ql:cron:<jid>, ql:crons,
           ql:queues
  Returns  the jid
  Errors   as queue.recurAtInterval
           as recurringJob.setCron
           'Cron(): Arg "times" not JSON array: <times>'   InvalidArgumentError
           'Recur(): Arg "overlap" must be one of skip, buffer_one, buffer_all, cancel_other, allow_all: <value>'   InvalidArgumentError
           'Recur(): Arg "<name>" must be a number from 0: <value>'   InvalidArgumentError
]=]
Commands['queue.upsertRecurring'] = function(D, now, queue, jid, klass, data, interval, offset, a, first)
  return Recurring.upsert(D, now, a)
end
