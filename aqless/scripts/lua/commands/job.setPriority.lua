--[=[ job.setPriority | priority
  Args     jid, priority
  Reads    ql:j:<jid>, ql:q:<q>-work
  Writes   ql:j:<jid>, ql:q:<q>-work
  Returns  the priority (number)
  Errors   'Job(): no jid provided'   InvalidArgumentError
           'Priority(): Arg "priority" missing or not a number: <priority>'   InvalidArgumentError
           'Priority(): Job {jid} does not exist'   JobNotFoundError
           'Queue(): no queue name provided'   JobNotFoundError
]=]
Commands['job.setPriority'] = function(D, now, jid, priority)
  return Job.set_priority(D, now, jid, priority)
end
