--[=[ job.timeout | timeout
  Args     jid...
  Reads    ql:j:<jid>, ql:config
  Writes   ql:j:<jid>, ql:j:<jid>-history, ql:q:<q>-locks|work, throttles
  Returns  nil
  Errors   'Timeout(): Job {jid} does not exist'   JobNotFoundError
           'Timeout(): Job {jid} not running'   LockLostError
           'Timeout(): Job <jid> not running'   LockLostError
]=]
Commands['job.timeout'] = function(D, now, jids)
  Job.timeout(D, now, jids)
end
