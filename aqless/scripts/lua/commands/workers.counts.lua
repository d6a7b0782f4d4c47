--[=[ workers.counts
  Args     none
  Reads    ql:config, ql:workers, ql:w:<worker>:jobs
  Writes   ql:workers, ql:w:<worker>:jobs (workers idle past max-worker-age are dropped)
  Returns  JSON list of every worker's {"name", "jobs": n, "stalled": n} ([] when none)
  Errors   none
]=]
Commands['workers.counts'] = function(D, now)
  return json_array(Worker.counts(now))
end
