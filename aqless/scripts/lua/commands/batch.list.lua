--[=[ batch.list
  Args     [offset], [count] (aqless's own: the batches, newest first, see batches.lua)
  Reads    ql:batches, ql:batches-expiring, ql:batch:<bid>
  Writes   ql:batches, ql:batches-expiring (the expired batches leave them)
  Returns  JSON object {total, batches: [batch.get's objects]}
  Errors   'Batch(): Arg "offset" not a number: <offset>'   InvalidArgumentError
           'Batch(): Arg "count" not a number: <count>'   InvalidArgumentError
]=]
Commands['batch.list'] = function(D, now, offset, count)
  return Batch.list(now, offset, count)
end
