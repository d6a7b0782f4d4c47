--[=[ job.log | log
  Args     jid, message, [data]
  Reads    ql:j:<jid>, ql:config
  Writes   ql:j:<jid>-history
  Returns  nil
  Errors   'Log(): Argument 'jid' missing'   InvalidArgumentError
           'Log(): Argument 'message' missing'   InvalidArgumentError
           'Log(): Argument 'data' not cjson: <data>'   InvalidArgumentError
           'Log(): Job <jid> does not exist'   JobNotFoundError
           cjson   InvalidArgumentError
]=]
Commands['job.log'] = function(D, now, jid, message, data)
  Job.log(D, now, jid, message, data)
end
