--[=[ queue.failedJobs
  Args     queue, [skip], [count], [group], [start], [budget]
  Reads    ql:failures, ql:f:<group>, ql:j:<jid>
  Writes   none
  Returns  {"jids": [...], "skipped": n, "group": next group or null (done), "start": n}
           (JSON): passing the first `skip` jobs of `queue` from position `start` of
           `group` ('' for the first group), the next up to `count`, read from at most
           `budget` jobs; `skipped`: how many of `skip` were passed
  Errors   'Queue(): no queue name provided'   InvalidArgumentError
           'Failed(): Arg "skip" is not a number: <skip>'   InvalidArgumentError
           'Failed(): Arg "count" is not a number: <count>'   InvalidArgumentError
           'Failed(): Arg "start" is not a number: <start>'   InvalidArgumentError
           'Failed(): Arg "budget" is not a number: <budget>'   InvalidArgumentError
]=]
Commands['queue.failedJobs'] = function(D, now, queue, skip, count, group, start, budget)
  return Helpers.json(Queue.failed_of(queue, skip, count, group, start, budget))
end
