--[=[ worker.jobs | workers
  Args     [worker]
  Reads    ql:config, ql:workers, ql:w:<worker>:jobs
  Writes   ql:workers, ql:w:<worker>:jobs (workers idle past max-worker-age are dropped)
  Returns  the worker's {"jobs": [jids], "stalled": [jids]}, or the JSON list of every worker's
           {"name", "jobs": n, "stalled": n}, most recent first (empty: {})
  Errors   none
]=]
Commands['worker.jobs'] = function(D, now, worker)
  if worker ~= nil then return Helpers.json(Worker.jobs(now, worker)) end
  return Helpers.json(Worker.counts(now))
end
