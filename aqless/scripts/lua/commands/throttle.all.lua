--[=[ throttle.all
  Args     none
  Reads    ql:throttles, ql:queues, ql:th:<tid>, ql:th:<tid>-locks|-pending
  Writes   ql:throttles (the ids whose record expired or was deleted leave it)
  Returns  JSON list of {"id", "maximum", "ttl", "locks": n, "pending": n}, by id, of the
           throttles that have a record: the indexed ones and every queue's own
  Errors   none
]=]
Commands['throttle.all'] = function(D, now)
  return json_array(Throttle.all())
end
