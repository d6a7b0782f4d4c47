--[=[ recurringJob.nextRuns
  Args     jid, count (aqless's own: the next spawn times, from the schedule or by interval)
  Reads    ql:r:<jid>, ql:q:<q>-recur, ql:cron:<jid>
  Writes   none
  Returns  [unix time...] (JSON; [] for no such template)
  Errors   'Recurring(): no jid provided'   InvalidArgumentError
           'Cron(): Arg "count" not a positive number: <count>'   InvalidArgumentError
]=]
Commands['recurringJob.nextRuns'] = function(D, now, jid, count)
  return Cron.next_runs(jid, count)
end
