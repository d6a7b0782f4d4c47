--[=[ queue.counts | queues
  Args     [queue]
  Reads    ql:queues, <q>-*, ql:q:<q>-recur, ql:paused_queues
  Writes   ql:q:<q>-scheduled|work, ql:j:<jid> (due scheduled jobs are promoted first)
  Returns  the counts object of the queue (JSON), or the JSON list of every queue's (empty: {};
           queue.counts adds "throttled")
  Errors   none
]=]
Commands['queue.counts'] = function(D, now, queue)
  if queue ~= nil then return Helpers.json(Queue.counts(D, now, queue)) end
  return Helpers.json(Queue.all_counts(D, now))
end
