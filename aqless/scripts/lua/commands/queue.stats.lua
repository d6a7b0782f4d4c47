--[=[ queue.stats | stats
  Args     queue, date
  Reads    ql:s:stats:<bin>:<q>, ql:s:wait:<bin>:<q>, ql:s:run:<bin>:<q>
  Writes   none
  Returns  the stats object of the day (JSON)
  Errors   'Queue(): no queue name provided'   InvalidArgumentError
           'Stats(): Arg "date" missing or not a number: <date>'   InvalidArgumentError
]=]
Commands['queue.stats'] = function(D, now, queue, date)
  return Helpers.stats(now, queue, date)
end
