--[=[ queue.upsertRecurring
  Args     queue, jid, klass, data, interval, offset, [name, value]... (aqless's own: as
           queue.recurAtInterval, with the options cron, tz, refill and times, a JSON list
           of fire times, as recurringJob.setCron's)
  Reads    ql:r:<jid>, ql:q:<old queue>-recur
  Writes   ql:r:<jid>, ql:q:<old queue>-recur, ql:q:<queue>-recur, ql:cron:<jid>, ql:crons,
           ql:queues
  Returns  the jid
  Errors   as queue.recurAtInterval
           as recurringJob.setCron
           'Cron(): Arg "times" not JSON array: <times>'   InvalidArgumentError
]=]
Commands['queue.upsertRecurring'] = function(D, now, queue, jid, klass, data, interval, offset, a, first)
  return Recurring.upsert(D, now, a)
end
