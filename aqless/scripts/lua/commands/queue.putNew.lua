--[=[ queue.putNew
  Args     worker, queue, jid, klass, data, delay, [name, value]... (aqless's own: as put, but
           it makes a job only when no job of the jid exists, see Job.put_new)
  Reads    ql:j:<jid>; as put
  Writes   as put (none when a job of the jid exists)
  Returns  {jid, outcome}: the jid, and put, or existed when a job of the jid existed
  Errors   'Put(): Arg "jid" missing'   InvalidArgumentError
           as put
]=]
Commands['queue.putNew'] = function(D, now, worker, queue, jid, klass, data, delay, a, first)
  return Job.put_new(D, now, a)
end
