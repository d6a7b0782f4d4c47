--[=[ batch.get
  Args     bid (aqless's own: a batch's record, see batches.lua)
  Reads    ql:batch:<bid>
  Writes   none
  Returns  JSON object {id, description, created, ttl, total, pending, done, failed,
           finished, expires, callbacks: {kind: {klass, queue, jid, fired}}}; nil when the
           batch does not exist (or expired)
  Errors   'Batch(): Arg "bid" missing'   InvalidArgumentError
]=]
Commands['batch.get'] = function(D, now, bid)
  return Batch.get(now, bid)
end
