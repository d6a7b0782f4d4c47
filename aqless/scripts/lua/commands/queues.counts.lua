--[=[ queues.counts
  Args     none
  Reads    ql:queues, <q>-*, ql:q:<q>-recur, ql:paused_queues
  Writes   ql:q:<q>-scheduled|work, ql:j:<jid> (due scheduled jobs are promoted first)
  Returns  JSON list of every queue's counts object ([] when none)
  Errors   none
]=]
Commands['queues.counts'] = function(D, now)
  return json_array(Queue.all_counts(D, now))
end
