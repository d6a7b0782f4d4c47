--[=[ recurringJob.extendCron
  Args     jid, cron, tz, refill, time... (aqless's own: adds fire times if the template still
           has this cron and tz)
  Reads    ql:r:<jid>, ql:q:<q>-recur
  Writes   ql:cron:<jid>, ql:crons
  Returns  1, or 0 for a template whose cron or tz changed (nothing written)
  Errors   as recurringJob.setCron
]=]
Commands['recurringJob.extendCron'] = function(D, now, jid, cron, tz, refill, times)
  return Cron.extend(jid, cron, tz, refill, times)
end
