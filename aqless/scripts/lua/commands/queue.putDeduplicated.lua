--[=[ queue.putDeduplicated
  Args     id, mode, ttl, worker, queue, jid, klass, data, delay, [name, value]... (aqless's
           own: put's arguments behind a dedup id and its mode, job, ttl or debounce; see
           Dedup.put)
  Reads    ql:dedup:<id>, ql:j:<holder>; as put (staged: the data beside the call, see
           queue.put)
  Writes   ql:dedup:<id>, ql:j:<jid>; as put (none when the put is deduplicated)
  Returns  {jid, outcome}: the job holding the id, and put, deduplicated or debounced
  Errors   'Dedup(): Arg "id" missing'   InvalidArgumentError
           'Dedup(): Arg "mode" must be job, ttl or debounce: <mode>'   InvalidArgumentError
           'Dedup(): Arg "ttl" not a positive number: <ttl>'   InvalidArgumentError
           as put
]=]
Commands['queue.putDeduplicated'] = function(D, now, id, mode, ttl, worker, queue, jid, klass, data, delay, a, first)
  return Dedup.put(D, now, a)
end
