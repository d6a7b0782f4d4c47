--[=[ queues.names
  Args     none
  Reads    ql:queues
  Writes   none
  Returns  JSON list of the queue names ([] when none)
  Errors   none
]=]
Commands['queues.names'] = function(D, now)
  return json_array(Queue.names())
end
