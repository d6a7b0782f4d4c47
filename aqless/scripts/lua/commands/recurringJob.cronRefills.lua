--[=[ recurringJob.cronRefills
  Args     lease (aqless's own: claims the cron schedules due for topping up for `lease`
           seconds)
  Reads    ql:crons, ql:r:<jid>, ql:cron:<jid>, ql:q:<q>-recur
  Writes   ql:crons
  Returns  [[jid, cron, tz, last fire time]...] (JSON)
  Errors   'Cron(): Arg "lease" not a positive number: <lease>'   InvalidArgumentError
]=]
Commands['recurringJob.cronRefills'] = function(D, now, lease)
  return Cron.refills(now, lease)
end
