--[=[ job.requeue | requeue
  Args     worker, queue, jid, klass, data, delay, [name, value]... (as put)
  Reads    as put
  Writes   as put
  Returns  the jid
  Errors   'Job(): no jid provided'   InvalidArgumentError
           'Requeue(): Job <jid> does not exist'   JobNotFoundError
           as put
]=]
Commands['job.requeue'] = function(D, now, worker, queue, jid, klass, data, delay, a, first)
  return Job.requeue(D, now, a)
end
