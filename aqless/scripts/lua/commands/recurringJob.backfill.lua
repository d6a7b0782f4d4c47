--[=[ recurringJob.backfill
  Args     jid, time... (aqless's own: a run of the template for each unix time given that no
           backfill made one for before, none after now; see schedules.lua)
  Reads    ql:r:<jid>, ql:rbackfill:<jid>
  Writes   ql:r:<jid>, ql:rbackfill:<jid>, ql:j:<jid>-<n>, ql:q:<q>-work, ql:q:<q>-scheduled
  Returns  how many runs it made
  Errors   'Recurring(): no jid provided'   InvalidArgumentError
           'Backfill(): Arg "time" not a number: <time>'   InvalidArgumentError
           'Backfill(): Arg "time" in the future: <time>'   InvalidArgumentError
           'Recur(): No recurring job <jid>'   JobNotFoundError
]=]
Commands['recurringJob.backfill'] = function(D, now, jid, times)
  return Recurring.backfill(D, now, jid, times)
end
