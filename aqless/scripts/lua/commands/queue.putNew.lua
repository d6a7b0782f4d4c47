--[=[ queue.putNew
  Args     worker, queue, jid, klass, data, delay, [name, value]... (aqless's own: as put, but
           it makes a job only when no job of the jid exists, see below)
  Reads    ql:j:<jid>; as put (staged: the data beside the call, see queue.put)
  Writes   as put (none when a job of the jid exists)
  Returns  {jid, outcome}: the jid, and put, or existed when a job of the jid existed
  Errors   'Put(): Arg "jid" missing'   InvalidArgumentError
           as put
]=]
-- A put that never replaces a job: the one to retry after a put whose reply was lost (a
-- timeout, a dropped connection). A plain put under an existing jid replaces that job,
-- whatever its state: had the first put landed and its job run (or be running), the
-- retry would run it again. This one changes nothing then, and says so. (Like a
-- deduplicated put it writes nothing, so put's own checks of its arguments run only when
-- it puts.)
Commands['queue.putNew'] = function(D, now, worker, queue, jid, klass, data, delay, a, first)
  check(jid, 'Put(): Arg "jid" missing')
  if call('EXISTS', Keys.job(jid)) == 1 then return {jid, 'existed'} end
  return {Job.put(D, now, a), 'put'}
end
