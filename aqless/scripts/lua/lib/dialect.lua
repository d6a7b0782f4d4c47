-- The two vocabularies. Both run the same core over the same keys; everything that differs
-- between qless-core (classic) and reqless-core is a field of these two tables, so the
-- difference lives here and nowhere else. Commands receive their dialect as `D`.

-- Fills {name} placeholders of an error template; extra values are ignored.
local function say(template, values)
  return (string.gsub(template, '{([%w_]+)}', function(name)
    local value = values[name]
    if value == nil or value == false then return 'false' end
    return tostring(value)
  end))
end

-- qless-core's vocabulary (the classic commands: put, pop, complete...)
local CLASSIC = {
  name = 'qless',
  -- the item key of a `put` history entry: {"q": queue}
  history_queue = 'q',
  -- top-level lists: cjson writes an empty one as {}
  list = function(list) return cjson.encode(list) end,
  -- job objects have 17 keys, recurring objects 11: no `throttles`
  show_throttles = false,
  -- queue counts and `jobs` listings know no `throttled` state
  throttled_state = false,
  -- `throttles` is an option of put, recur and recur.update
  throttle_options = false,
  -- ql:tags counters are decremented, never removed
  drop_unused_tags = false,
  -- retention purge keeps ql:j:<jid>-dependencies
  purge_dependencies = false,
  -- an exhausted retry writes `failed` and notifies ql:failed (if tracked)
  exhausted_retry_history = 'failed',
  exhausted_retry_publishes = true,
  -- a heartbeat refreshes the worker's entry in ql:workers
  heartbeat_registers_worker = true,
  -- a timed-out job keeps its `worker` field
  timeout_clears_worker = false,
  -- pop honours config <queue>-max-concurrency
  max_concurrency = true,
  -- fail, retry and heartbeat take no `attempt` (aqless's own: the reqless names only)
  attempts = false,
  -- unfail accepts any count
  unfail_positive_count = false,
  -- recur.tag stores the list as cjson writes it
  recur_tags_list = function(list) return cjson.encode(list) end,
  errors = {
    complete_missing = 'Complete(): Job {jid} does not exist',
    complete_state = 'Complete(): Job {jid} is not currently running: {state}',
    complete_worker = 'Complete(): Job {jid} has been handed out to another worker: {worker}',
    complete_queue = 'Complete(): Job {jid} running in another queue: {queue}',
    complete_no_queue = 'Complete(): Arg "queue" missing',
    fail_missing = 'Fail(): Job {jid}does not exist',
    fail_state = 'Fail(): Job {jid}not currently running: {state}',
    fail_worker = 'Fail(): Job {jid} running with another worker: {worker}',
    retry_missing = 'Retry(): Job {jid} does not exist',
    retry_state = 'Retry(): Job {jid} is not currently running: {state}',
    retry_worker = 'Retry(): Job {jid} has been given to another worker: {worker}',
    retry_no_queue = 'Retry(): Arg "queue" missing',
    heartbeat_missing = 'Heartbeat(): Job {jid} does not exist',
    heartbeat_state = 'Heartbeat(): Job {jid} not currently running: {state}',
    heartbeat_worker = 'Heartbeat(): Job {jid} given out to another worker: {worker}',
    timeout_missing = 'Timeout(): Job {jid} does not exist',
    priority_missing = 'Priority(): Job {jid} does not exist',
    pop_count = 'Pop(): Arg "count" missing or not a number: {value}',
    jobs_count = 'Jobs(): Arg "count" not a number: {value}',
    tag_count = 'Tag(): Arg "count" not a number: {value}',
    unfail_no_queue = 'Queue(): no queue name provided',
    recur_jid = 'RecurringJob On(): Arg "jid" missing',
    recur_klass = 'RecurringJob On(): Arg "klass" missing',
    recur_data = 'RecurringJob On(): Arg "data" not JSON: {value}',
    recur_odd = 'Odd number of additional args: {value}',
  },
  config_defaults = {
    ['application'] = 'qless',
    ['heartbeat'] = 60,
    ['grace-period'] = 10,
    ['stats-history'] = 30,
    ['histogram-history'] = 7,
    ['jobs-history-count'] = 50000,
    ['jobs-history'] = 604800,
  },
}

-- reqless-core's vocabulary (the dotted commands: queue.put, job.complete...)
local REQLESS = {
  name = 'reqless',
  history_queue = 'queue',
  list = json_array,
  show_throttles = true,
  throttled_state = true,
  throttle_options = true,
  drop_unused_tags = true,
  purge_dependencies = true,
  exhausted_retry_history = 'failed-retries',
  exhausted_retry_publishes = false,
  heartbeat_registers_worker = false,
  timeout_clears_worker = true,
  -- reqless-core no longer reads `<queue>-max-concurrency`; aqless does, in both vocabularies,
  -- so a cap set by a qless client (Ruby's `queue.max_concurrency = n`) binds every worker
  max_concurrency = true,
  attempts = true,
  unfail_positive_count = true,
  recur_tags_list = json_array,
  errors = {
    complete_missing = 'Complete(): Job does not exist',
    complete_state = 'Complete(): Job is not currently running: {state}',
    complete_worker = 'Complete(): Job has been handed out to another worker: {worker}',
    complete_queue = 'Complete(): Job running in another queue: {queue}',
    complete_no_queue = 'Complete(): Arg "queue_name" missing',
    fail_missing = 'Fail(): Job does not exist',
    fail_state = 'Fail(): Job not currently running: {state}',
    fail_worker = 'Fail(): Job running with another worker: {worker}',
    retry_missing = 'Retry(): Job does not exist',
    retry_state = 'Retry(): Job is not currently running: {state}',
    retry_worker = 'Retry(): Job has been given to another worker: {worker}',
    retry_no_queue = 'Retry(): Arg "queue_name" missing',
    heartbeat_missing = 'Heartbeat(): Job does not exist',
    heartbeat_state = 'Heartbeat(): Job not currently running: {state}',
    heartbeat_worker = 'Heartbeat(): Job given out to another worker: {worker}',
    timeout_missing = 'Timeout(): Job {jid} not running',
    priority_missing = 'Queue(): no queue name provided',
    pop_count = 'Pop(): Arg "limit" missing or not a number: {value}',
    jobs_count = 'Jobs(): Arg "limit" not a number: {value}',
    tag_count = 'Tag(): Arg "limit" not a number: {value}',
    unfail_no_queue = 'queue.unfail(): Arg "queue" missing',
    recur_jid = 'Recur(): Arg "jid" missing',
    recur_klass = 'Recur(): Arg "klass" missing',
    recur_data = 'Recur(): Arg "data" not JSON: {value}',
    recur_odd = 'Recur(): Odd number of additional args: {value}',
  },
  config_defaults = {
    ['application'] = 'reqless',
    ['grace-period'] = '10',
    ['heartbeat'] = '60',
    ['jobs-history'] = '604800',
    ['jobs-history-count'] = '50000',
    ['max-job-history'] = '100',
    ['max-pop-retry'] = '1',
    ['max-worker-age'] = '86400',
  },
}

-- Raises the dialect's text for an error.
local function refuse(D, name, values)
  raise(say(D.errors[name], values or {}))
end
