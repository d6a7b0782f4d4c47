--[=[ batch.put
  Args     bid, description, ttl, callbacks, count, (n, worker, queue, jid, klass, data,
           delay, [name, value]...)... (aqless's own: a batch of `count` member puts, each
           its number of arguments n then put's; callbacks a JSON object of success,
           complete, death: {klass, queue, jid, data}; see batches.lua)
  Reads    ql:batch:<bid>, ql:j:<jid> (members and callbacks); as put
  Writes   ql:batch:<bid>, ql:batch:<bid>-members, ql:batches, ql:batches-expiring; the
           members' ql:j:<jid> (and the `batch` field); as put
  Returns  the bid
  Errors   'Batch(): Arg "bid" missing'   InvalidArgumentError
           'Batch(): batch already exists: <bid>'   InvalidArgumentError
           'Batch(): Arg "ttl" not a positive number: <ttl>'   InvalidArgumentError
           'Batch(): Arg "count" not a number from 1 to 10000: <count>'   InvalidArgumentError
           'Batch(): callback "<kind>" needs a klass, a queue, a jid and object data'
             InvalidArgumentError
           'Batch(): callback jid already exists: <jid>'   InvalidArgumentError
           'Batch(): member <i> has no put arguments'   InvalidArgumentError
           'Batch(): member jid given twice: <jid>'   InvalidArgumentError
           'Batch(): member jid already exists: <jid>'   InvalidArgumentError
           'Batch(): arguments left after the members: <n>'   InvalidArgumentError
           cjson   InvalidArgumentError
           as put
]=]
Commands['batch.put'] = function(D, now, bid, description, ttl, callbacks, count, a, first)
  return Batch.put(now, a)
end
