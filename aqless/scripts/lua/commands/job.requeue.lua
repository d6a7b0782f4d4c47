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
  check(jid, 'Job(): no jid provided')
  check(call('EXISTS', Keys.job(jid)) == 1, 'Requeue(): Job ' .. jid .. ' does not exist')
  return Job.put(D, now, a)
end
