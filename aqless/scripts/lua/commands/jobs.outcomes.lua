--[=[ jobs.outcomes
  Args     queue, worker, limit, ([data_apart, data_apart_no_history or data_beside],
           (command, command's now, count, count arguments)...) (aqless's own: runs each outcome `command` (job.complete,
           job.completeAndRequeue, job.fail, job.retry or job.requeue) as its own call would,
           in order, then, unless queue is '', pops as rateLimit.pop, with that option when
           given; the outcomes' daily statistics are written once per queue and day; a run of
           plain completes may be framed as job.complete*, worker, queue, count, then each
           one's now, jid and attempt, each run as job.complete now jid worker queue ''
           keep_data 1 attempt <attempt>)
  Reads    as the commands, as rateLimit.pop, ql:offers:<q> (while the worker's offer on the
           queue stands, the pop takes at most its offered slots less the jobs locked to it)
  Writes   as the commands, as rateLimit.pop
  Returns  {ok, refused or '' (no pop), rateLimit.pop's reply or the text of its refusal,
           then for each outcome: ok or refused, the command's reply or the text of its
           refusal} (a refused outcome stops neither the others nor the pop)
  Errors   'Outcomes(): Arg "command" not an outcome: <command>'   InvalidArgumentError
           'Outcomes(): Arg "now" not a number: <now>'   InvalidArgumentError
           'Outcomes(): Arg "count" not a count of the arguments left: <count>'
             InvalidArgumentError
           'Pop(): Arg "worker" missing'   InvalidArgumentError
           'Pop(): Arg "limit" missing or not a number: {value}'   InvalidArgumentError
]=]
Commands['jobs.outcomes'] = function(D, now, queue, worker, limit, a, first)
  return Queue.outcomes(now, queue or '', worker, limit, a, first, find_command)
end
