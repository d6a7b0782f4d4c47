--[=[ queue.popAfter
  Args     queue, worker, limit, ([data_apart, data_apart_no_history or data_beside],
           command, command's now, command's argument...)
           (aqless's own: runs the outcome `command` (job.complete, job.completeAndRequeue,
           job.fail, job.retry or job.requeue) as its own call would, then pops as
           rateLimit.pop, with that option when given)
  Reads    as the command, as rateLimit.pop, ql:offers:<q> (the pop takes at most the
           offered slots less the jobs locked to the worker while its offer stands: see
           jobs.outcomes)
  Writes   as the command, as rateLimit.pop
  Returns  {ok or refused, rateLimit.pop's reply or the text of its refusal, ok or refused, the
           command's reply or the text of its refusal} (a refused command does not stop the pop)
  Errors   'PopAfter(): Arg "command" not an outcome: <command>'   InvalidArgumentError
           'PopAfter(): Arg "now" not a number: <now>'   InvalidArgumentError
           'Queue(): no queue name provided'   InvalidArgumentError
           'Pop(): Arg "worker" missing'   InvalidArgumentError
           'Pop(): Arg "limit" missing or not a number: {value}'   InvalidArgumentError
]=]
Commands['queue.popAfter'] = function(D, now, queue, worker, limit, a, first)
  return Queue.pop_after(now, queue, worker, limit, a, first, find_command)
end
