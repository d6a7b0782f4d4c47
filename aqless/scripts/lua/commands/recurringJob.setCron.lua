--[=[ recurringJob.setCron
  Args     jid, cron, tz, refill, time... (aqless's own: the template spawns at these unix
           times, the first next; see cron.lua)
  Reads    ql:r:<jid>
  Writes   ql:r:<jid>, ql:cron:<jid>, ql:crons, ql:q:<q>-recur
  Returns  1
  Errors   'Recurring(): no jid provided'   InvalidArgumentError
           'Cron(): Arg "cron" missing'   InvalidArgumentError
           'Cron(): Arg "tz" missing'   InvalidArgumentError
           'Cron(): Arg "refill" not a number: <refill>'   InvalidArgumentError
           'Cron(): Arg "time" not a number: <time>'   InvalidArgumentError
           'Cron(): no fire time given'   InvalidArgumentError
           'Recur(): No recurring job <jid>'   JobNotFoundError
]=]
Commands['recurringJob.setCron'] = function(D, now, jid, cron, tz, refill, times)
  return Cron.set(jid, cron, tz, refill, times)
end
