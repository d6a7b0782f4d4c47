--[=[ job.complete
  Args     jid, worker, queue, data, [name, value]... (aqless's own options: result (JSON text,
           kept as the job's `result` field), result_dropped (why it has none), see results.lua;
           keep_data (any value): the job keeps its stored data, and `data` is neither read nor
           written; attempt: see Job.check_attempt)
  Reads    ql:j:<jid>, ql:j:<jid>-dependents, ql:tracked, ql:config, ql:completed, throttles
  Writes   ql:j:<jid>, ql:j:<jid>-history, <q>-*, throttles, ql:s:run:<bin>:<q>,
           ql:aqless:tp:<hour>:<q>, ql:w:<worker>:jobs, ql:completed, ql:aqless:retention,
           the released dependents' ql:j:<dependent>,
           ql:j:<dependent>-dependencies and queue sets; retention deletes old jobs' ql:j:<old>,
           ql:j:<old>-history, ql:j:<old>-dependencies, ql:t:<tag>, ql:tags
  Returns  complete
  Errors   'Job(): no jid provided'   InvalidArgumentError
           'Complete(): Arg "worker" missing'   InvalidArgumentError
           'Complete(): Arg "queue_name" missing'   InvalidArgumentError
           'Complete(): Arg "data" missing or not JSON: <data>'   InvalidArgumentError
           'Complete(): Job does not exist'   JobNotFoundError
           'Complete(): Job is not currently running: {state}'   LockLostError
           'Complete(): Job has been handed out to another worker: {worker}'   LockLostError
           'Complete(): Job running in another queue: {queue}'   InvalidArgumentError
           'Complete(): Arg "result" not JSON'   InvalidArgumentError
           'Complete(): Arg "attempt" not a whole number: <attempt>'   InvalidArgumentError
           'Complete(): Job <jid> attempt <n> is stale: the job is on attempt <current>'
             StaleAttemptError
           cjson   InvalidArgumentError
]=]
Commands['job.complete'] = function(D, now, jid, worker, queue, data, a, first)
  -- aqless's worker sends the attempt as the last option pair: taken off first, the
  -- options are what they were without it (often none: no table made)
  local attempt = nil
  if a.n >= 6 and a.n % 2 == 0 and a[a.n - 1] == 'attempt' then
    attempt, a[a.n - 1], a[a.n], a.n = a[a.n], nil, nil, a.n - 2
  end
  -- and keep_data before it, the same way (a job whose code left its data alone)
  local keep = false
  if a.n >= 6 and a.n % 2 == 0 and a[a.n - 1] == 'keep_data' then
    keep, a[a.n - 1], a[a.n], a.n = true, nil, nil, a.n - 2
  end
  local o = options(a, first)
  keep = keep or o.keep_data ~= nil
  attempt = attempt or o.attempt
  if o ~= NOTHING then o = {result = o.result, result_dropped = o.result_dropped} end
  return Job.complete(D, now, jid, worker, queue, data, o, keep, attempt)
end
