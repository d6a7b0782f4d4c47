-- A job's way through a queue: put, complete, fail, retry, heartbeat, timeout, and the
-- expiry of lost locks (pop and peek are in queue.lua).

local function time_field(now) return string.format('%.20f', now) end

local function failure_text(group, message, when, worker)
  return cjson.encode({group = group, message = message, when = when, worker = worker})
end

local function exhausted_message(queue)
  return 'Job exhausted retries in queue "' .. tostring(queue) .. '"'
end

-- Refuses a command on a job: the error names what its text needs of the job.
local function refuse_job(D, name, jid, job)
  refuse(D, name, {jid = jid, state = job.state, worker = job.worker, queue = job.queue})
end

-- Whether `text` is a whole number's text (remembered per text: attempts are few).
function Job.is_whole_number_text(text)
  if Job.whole_number_texts == nil then
    Job.whole_number_texts = memo(function(known)
      local n = number(known)
      return n ~= nil and n == math.floor(n)
    end)
  end
  return Job.whole_number_texts(text)
end

-- Fencing (aqless's own): every pop of a job stores a new, rising `attempt` in its hash
-- (queue.lua's hand_out). aqless's workers give it with the verbs of the job's owner, and a
-- verb given an attempt that is not the job's current one is refused, so that two attempts
-- under one worker name (a lock that expired, then a pop by the same worker) are told
-- apart. Without one (other clients), nothing is checked. The fence is checked as soon as
-- the job is known to exist, before its state and worker: an earlier attempt's verb is
-- refused as stale whatever became of the job since (completed or failed by the later
-- attempt, popped by another worker), and never mistaken for a retried verb of the current
-- attempt that already took effect. `verb`: the text's prefix; `given`: the argument (nil:
-- none); `stored`: the job's field.
-- (The usual call gives the attempt as stored, the same text: a whole number's text, known
-- once, answers it without reading either as a number.)
function Job.check_attempt(verb, jid, given, stored)
  if given == nil then return end
  if given == stored and Job.is_whole_number_text(given) then return end
  local n = number(given)
  if n == nil or n ~= math.floor(n) then
    raise(verb .. '(): Arg "attempt" not a whole number: ' .. tostring(given))
  end
  local current = math.floor(tonumber(stored) or 0)
  if n ~= current then
    raise(verb .. '(): Job ' .. jid .. ' attempt ' .. integer_text(n) ..
      ' is stale: the job is on attempt ' .. integer_text(current))
  end
end

local function join_failure_group(jid, group)
  call('SADD', Keys.failures(), group)
  call('LPUSH', Keys.failed(group), jid)
end

---------------------------------------------------------------------------------------------
-- complete / fail / retry / heartbeat / timeout: only a running job's owner may

-- (Complete's helpers are the locals of one block: only a chunk's top-level locals count
-- towards its limit of 200.)
do
  -- The fields complete reads of the job, one HMGET (a table by name would cost the server
  -- more than the read), to finish it or to move it to its next queue (then the priority in
  -- the dedup id's place, and no batch or template, which only finishing needs): its class
  -- (Stats.by_class), batch and template (Recurring.ended) last; each field's position in
  -- the reply, as upvalues (read from a table by name, each costs the server a lookup on
  -- every complete).
  local WORKER, STATE, DEDUP, PRIORITY, RETRIES, QUEUE, TIME, HELD_IN, THROTTLES, ATTEMPT,
    CHECKPOINT, KLASS, BATCH, SPAWNED = 1, 2, 3, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13

  local function purge(D, jids)
    for _, jid in ipairs(jids) do
      Job.delete(D, jid, Tags.parse(call('HGET', Keys.job(jid), 'tags')))
      if D.purge_dependencies then call('DEL', Keys.dependencies(jid)) end
    end
  end

  -- Retention of completed jobs: by age (jobs-history) and by count (jobs-history-count).
  local function purge_completed(D, now, history, keep)
    local completed = Keys.completed()
    local horizon = now - history
    local old = call('ZRANGEBYSCORE', completed, 0, horizon)
    if #old > 0 then
      purge(D, old)
      call('ZREMRANGEBYSCORE', completed, 0, horizon)
    end
    local excess = call('ZRANGE', completed, 0, -(keep + 1))
    if #excess > 0 then
      purge(D, excess)
      call('ZREMRANGEBYRANK', completed, 0, -(keep + 1))
    end
  end

  -- Retention amortized (aqless's own, docs/protocol/CORE.md 5.7): the purge runs at the
  -- first completion in each second of `now` and after every `slack` + 1 completions within
  -- one, `slack` being 1% of jobs-history-count (whole jobs); with no slack (a count below
  -- 100, or jobs-history <= 0) at every completion, as the reference does. The marker
  -- ql:aqless:retention holds one field, the second of the last purge by time, counting the
  -- completions in it (one HINCRBY a completion); a new second's field replaces the others.
  -- While a call's outcomes are folded (Stats.fold), a second's completions enter the
  -- completed set with one ZADD and are counted with one HINCRBY at the flush, which purges
  -- once if a completion among them would have: the purge comes later in the call, never
  -- later than the call (Job.retention_count). (Nothing among the outcomes reads the
  -- completed set before: a job named again flushes first.)
  -- (while folding, the settings are read once a call, and each second's entry is found by
  -- its number)
  local function retain(D, now, jid)
    local folded = Stats.folded
    local r = folded and folded.retention
    local history, keep, slack
    if r then
      history, keep, slack = r.history, r.keep, r.slack
    else
      history = Config.number('jobs-history')
      keep = whole(Config.number('jobs-history-count'))
      slack = math.floor(keep / 100)
      if folded then
        r = {history = history, keep = keep, slack = slack}
        folded.retention = r
      end
    end
    if history > 0 and slack > 0 then
      if folded then
        local at = math.floor(now)
        local entry = r[at]
        if entry == nil then
          local second = integer_text(at)
          entry = Stats.folded_entry('r ' .. second, 'retain', D, second, slack)
          r[at] = entry
        end
        entry.delta, entry.now = entry.delta + 1, math.max(entry.now or now, now)
        local members = entry.samples
        members[#members + 1], members[#members + 2] = now, jid
        return
      end
      local second = integer_text(math.floor(now))
      call('ZADD', Keys.completed(), now, jid)
      if not Job.retention_count(second, 1, slack) then return end
    else
      call('ZADD', Keys.completed(), now, jid)
    end
    purge_completed(D, now, history, keep)
  end

  -- Counts `n` completions in `second` on the marker; whether one of them is a purge's (the
  -- second's first, or one after every `slack` + 1). A new second's field replaces the others.
  function Job.retention_count(second, n, slack)
    local marker = Keys.retention()
    local since = call('HINCRBY', marker, second, n)
    if since == n then
      call('DEL', marker)
      call('HSET', marker, second, n)
    end
    return math.floor((since - 1) / (slack + 1)) ~= math.floor((since - n - 1) / (slack + 1))
  end

  -- The flush's part (Stats.flush) of a folded second's completions: their entries in the
  -- completed set (`members`: score, jid, ...), their count and the purge.
  function Job.retention_flush(D, second, slack, n, now, members)
    for i = 1, #members, 5000 do
      call('ZADD', Keys.completed(), unpack(members, i, math.min(i + 4999, #members)))
    end
    if Job.retention_count(second, n, slack) then
      purge_completed(D, now, Config.number('jobs-history'),
        whole(Config.number('jobs-history-count')))
    end
  end

  -- The last fields of complete's write of the job: its data, unless the job keeps the
  -- stored data, then the `result` pairs (a field written twice in one HSET is looked for
  -- twice in the job's hash).
  local function data_and_result(data, keep, result)
    if keep then return unpack(result) end
    return 'data', data, unpack(result)
  end

  -- Checks complete's arguments before anything is read; returns the options parsed: the
  -- next queue, its delay and its dependencies (each nil when not given).
  local function checked(D, jid, worker, queue, data, o, keep)
    check(jid, 'Job(): no jid provided')
    check(worker, 'Complete(): Arg "worker" missing')
    if queue == nil then refuse(D, 'complete_no_queue') end
    if not keep and decode(data) == false then
      raise('Complete(): Arg "data" missing or not JSON: ' .. tostring(data))
    end
    if o == NOTHING then return nil end  -- (no options: nothing more to check)
    local delay, depends = nil, nil
    if o.delay ~= nil then
      delay = number(o.delay)
      check(delay, 'assertion failed!')
    end
    if o.depends ~= nil then
      depends = string_list(decode(o.depends))
      check(depends, 'Complete(): Arg "depends" not JSON: ' .. o.depends)
    end
    local next_queue = o.next
    check(next_queue ~= '', 'Complete(): Arg "next" empty')
    check(delay == nil or next_queue ~= nil,
      'Complete(): "delay" cannot be used without a "next".')
    check(depends == nil or next_queue ~= nil,
      'Complete(): "depends" cannot be used without a "next".')
    return next_queue, delay, depends
  end

  -- The job's fields (those to finish it, or to move it with a next queue) when `worker` runs
  -- it in `queue` at the `attempt` given; else the refusal.
  -- (the checkpoint and the batch read here spare a command each: an HDEL of a checkpoint
  -- that is mostly absent, Batch.ended's HGET)
  local function read_owned(D, jid, worker, queue, next_queue, attempt)
    local v
    if next_queue == nil then
      v = call('HMGET', Keys.job(jid), 'worker', 'state', 'dedup', 'retries', 'queue', 'time',
        'held_in', 'throttles', 'attempt', 'checkpoint', 'klass', 'batch', 'spawned_from_jid')
    else
      v = call('HMGET', Keys.job(jid), 'worker', 'state', 'priority', 'retries', 'queue',
        'time', 'held_in', 'throttles', 'attempt', 'checkpoint', 'klass')
    end
    local holder, state = v[WORKER] or nil, v[STATE] or nil
    local job_queue = v[QUEUE] or nil
    if state ~= 'running' or holder ~= worker or job_queue ~= queue then
      local job = {worker = holder, state = state, queue = job_queue}
      if state == nil then refuse_job(D, 'complete_missing', jid, job) end
      Job.check_attempt('Complete', jid, attempt, v[ATTEMPT])
      if state ~= 'running' then refuse_job(D, 'complete_state', jid, job) end
      if holder ~= worker then refuse_job(D, 'complete_worker', jid, job) end
      refuse_job(D, 'complete_queue', jid, job)
    end
    Job.check_attempt('Complete', jid, attempt, v[ATTEMPT])
    return v
  end

  -- Moves the completed job on to `next_queue` (`v`: its fields, read for a next queue); returns
  -- its new state.
  local function to_next(D, now, jid, queue, next_queue, v, data, keep, delay, depends)
    delay, depends = delay or 0, depends or {}
    Events.advanced(jid, queue, next_queue)
    History.put(D, jid, now, next_queue)
    Job.register_queue(next_queue, now)
    -- (the reference stores `waiting` for a delayed job too; aqless stores the state it has)
    local scheduled = delay > 0 and #depends == 0
    local next_state = scheduled and 'scheduled' or 'waiting'
    call('HSET', Keys.job(jid), 'state', next_state, 'worker', '',
      'failure', '{}', 'queue', next_queue, 'expires', 0,
      'remaining', tonumber(v[RETRIES]) or 5, 'time', time_field(now),
      data_and_result(data, keep, NOTHING))
    if scheduled then
      call('ZADD', Keys.queue(next_queue, 'scheduled'), now + delay, jid)
      return 'scheduled'
    end
    if Job.add_dependencies(jid, depends) > 0 then
      call('ZADD', Keys.queue(next_queue, 'depends'), now, jid)
      call('HSET', Keys.job(jid), 'state', 'depends')
      if delay > 0 then call('HSET', Keys.job(jid), 'scheduled', now + delay) end
      return 'depends'
    end
    Job.to_work(next_queue, jid, tonumber(v[PRIORITY]) or 0, now)
    return 'waiting'
  end

  -- Finishes the completed job (`v`: its fields, read to finish it): its dedup id, batch, the
  -- completed set with its retention, the dependents it releases (`dependents`).
  local function to_complete(D, now, jid, queue, v, data, keep, result, dependents)
    Events.completed(jid, queue)
    Dedup.release(jid, v[DEDUP] or nil)
    Batch.ended(now, jid, 'done', v[BATCH])
    call('HSET', Keys.job(jid), 'state', 'complete', 'worker', '',
      'failure', '{}', 'queue', '', 'expires', 0, 'remaining', tonumber(v[RETRIES]) or 5,
      'time', time_field(now), data_and_result(data, keep, result))
    retain(D, now, jid)
    Job.release_dependents(jid, now, dependents)
    if v[SPAWNED] then Recurring.ended(D, now, v[SPAWNED], jid, true) end
    return 'complete'
  end

  -- Completes a running job; with `next` it is put into that queue instead.
  -- o: next, delay (number), depends (list), result or result_dropped (results.lua), each
  -- optional. `keep`: the job keeps its stored data, `data` is not looked at (aqless's
  -- workers, when the job's code left the data as it was: decoded and written again, a
  -- payload of 100 KB costs the server ~150 µs).
  function Job.complete(D, now, jid, worker, queue, data, o, keep, attempt)
    local next_queue, delay, depends = checked(D, jid, worker, queue, data, o, keep)
    local result = Results.fields(o, next_queue)
    local v = read_owned(D, jid, worker, queue, next_queue, attempt)
    local held_in, throttles = v[HELD_IN] or nil, v[THROTTLES]

    History.done(jid, now)
    Job.leave_running(Job.home_of(queue, held_in, jid), jid, next_queue == nil)
    -- done: its checkpoint (checkpoint.lua) goes, and `held_in` when the job has one
    if held_in ~= nil then
      call('HDEL', Keys.job(jid), 'held_in', 'checkpoint')
    elseif v[CHECKPOINT] then
      call('HDEL', Keys.job(jid), 'checkpoint')
    end
    -- (read before the release, which changes none of these keys)
    local dependents, none_pending = nil, false
    local throttle_list = Throttle.parse(throttles)
    if next_queue == nil then
      dependents, none_pending = Job.dependents_and_tracking(jid,
        Throttle.sole_pending(throttle_list))
    end
    Throttle.release_list(jid, now, throttle_list, none_pending)
    local ran = now - (tonumber(v[TIME]) or now)
    Stats.record_one(queue, 'run', now, ran)
    Stats.tick(queue, now, 'c')
    Stats.by_class(queue, now, v[KLASS], ran)
    Stats.remove(Keys.worker_jobs(worker), jid)
    Events.if_tracked('completed', jid)
    if next_queue ~= nil then
      return to_next(D, now, jid, queue, next_queue, v, data, keep, delay, depends)
    end
    return to_complete(D, now, jid, queue, v, data, keep, result, dependents)
  end
end

function Job.fail(D, now, jid, worker, group, message, data, attempt)
  check(jid, 'Job(): no jid provided')
  check(worker, 'Fail(): Arg "worker" missing')
  check(group, 'Fail(): Arg "group" missing')
  check(group ~= '', 'Fail(): Arg "group" empty')
  check(message, 'Fail(): Arg "message" missing')
  local decoded = nil
  if data ~= nil then decoded = decode(data) or nil end  -- JSON false: no data (reference)
  local job = Job.read(jid, {'queue', 'state', 'worker', 'held_in', 'throttles', 'dedup',
    'attempt', 'klass'})
  if job.state == nil then refuse_job(D, 'fail_missing', jid, job) end
  Job.check_attempt('Fail', jid, attempt, job.attempt)
  if job.state ~= 'running' then refuse_job(D, 'fail_state', jid, job) end
  if job.worker ~= worker then refuse_job(D, 'fail_worker', jid, job) end

  Events.failed(jid, group, message, worker)
  Events.if_tracked('failed', jid)
  Stats.remove(Keys.worker_jobs(worker), jid)
  History.append(jid, now, 'failed', {worker = worker, group = group})
  Stats.count(job.queue, now, {failures = 1, failed = 1}, job.klass)
  Job.leave_queue(Job.home(job, jid), jid)
  Job.settle_home(jid, job)
  local key = Keys.job(jid)
  if decoded ~= nil then call('HSET', key, 'data', cjson.encode(decoded)) end
  call('HSET', key, 'state', 'failed', 'worker', '', 'expires', '',
    'failure', failure_text(group, message, math.floor(now), worker))
  Throttle.release_all(jid, now, job.throttles or false)
  join_failure_group(jid, group)
  Dedup.release(jid, job.dedup)
  Batch.ended(now, jid, 'failed')
  Flows.failed(now, jid, D)
  return jid
end

function Job.retry(D, now, jid, queue, worker, delay, group, message, attempt)
  check(jid, 'Job(): no jid provided')
  if queue == nil then refuse(D, 'retry_no_queue') end
  check(worker, 'Retry(): Arg "worker" missing')
  local delay_n = optional_number(delay, 0, 'Retry(): Arg "delay" not a number: ')
  check(group ~= '', 'Retry(): Arg "group" empty')
  local job = Job.read(jid, {'queue', 'state', 'retries', 'worker', 'priority', 'held_in',
    'throttles', 'dedup', 'attempt', 'klass'})
  if job.state == nil then refuse_job(D, 'retry_missing', jid, job) end
  Job.check_attempt('Retry', jid, attempt, job.attempt)
  if job.state ~= 'running' then refuse_job(D, 'retry_state', jid, job) end
  if job.worker ~= worker then refuse_job(D, 'retry_worker', jid, job) end

  local key = Keys.job(jid)
  local remaining = call('HINCRBY', key, 'remaining', -1)
  call('HDEL', key, 'grace')
  Stats.remove(Keys.queue(Job.home(job, jid), 'locks'), jid)
  Stats.remove(Keys.worker_jobs(worker), jid)
  Throttle.release_all(jid, now, job.throttles or false)
  if queue == job.queue then
    Job.settle_home(jid, job)
  elseif remaining >= 0 then
    call('HSET', key, 'held_in', queue)
  end
  local explained = group ~= nil and message ~= nil
  if remaining < 0 then
    group = group or ('failed-retries-' .. queue)
    History.append(jid, now, D.exhausted_retry_history, {group = group})
    local failure
    if explained then
      failure = failure_text(group, message, math.floor(now), worker)
    else
      failure = failure_text(group, exhausted_message(job.queue), now, '')
    end
    call('HSET', key, 'state', 'failed', 'worker', '', 'expires', '', 'failure', failure)
    Job.settle_home(jid, job)
    if D.exhausted_retry_publishes then Events.if_tracked('failed', jid) end
    join_failure_group(jid, group)
    Dedup.release(jid, job.dedup)
    Batch.ended(now, jid, 'failed')
    Stats.count(queue, now, {failures = 1, failed = 1}, job.klass)
    Flows.failed(now, jid, D)
  else
    if delay_n > 0 then
      call('ZADD', Keys.queue(queue, 'scheduled'), now + delay_n, jid)
      call('HSET', key, 'state', 'scheduled')
    else
      Job.to_work(queue, jid, tonumber(job.priority) or 0, now)
      call('HSET', key, 'state', 'waiting')
    end
    if explained then
      call('HSET', key, 'failure', failure_text(group, message, math.floor(now), worker))
    end
  end
  return math.floor(remaining)
end

-- Returns a running job to the work set of the queue that holds it, at its priority, as a
-- retry would but with its retries untouched: the worker was stopped (a graceful stop, the
-- end of its grace, an operator), the job's code did not fail. Its history says why
-- (`handed-back` with the reason and the worker). A lost lock still spends a retry.
function Job.hand_back(now, jid, worker, reason, attempt)
  check(jid, 'Job(): no jid provided')
  check(worker, 'HandBack(): Arg "worker" missing')
  check(reason, 'HandBack(): Arg "reason" missing')
  check(reason ~= '', 'HandBack(): Arg "reason" empty')
  local job = Job.read(jid, {'queue', 'state', 'worker', 'priority', 'held_in', 'throttles',
    'attempt'})
  check(job.state ~= nil, 'HandBack(): Job ' .. jid .. ' does not exist')
  Job.check_attempt('HandBack', jid, attempt, job.attempt)
  check(job.state == 'running',
    'HandBack(): Job ' .. jid .. ' is not currently running: ' .. job.state)
  check(job.worker == worker,
    'HandBack(): Job ' .. jid .. ' has been given to another worker: ' .. tostring(job.worker))

  local key, home = Keys.job(jid), Job.home(job, jid)
  call('HDEL', key, 'grace')
  call('ZREM', Keys.queue(home, 'locks'), jid)
  call('ZREM', Keys.worker_jobs(worker), jid)
  Throttle.release_all(jid, now, job.throttles or false)
  History.append(jid, now, 'handed-back', {reason = reason, worker = worker})
  Job.to_work(home, jid, tonumber(job.priority) or 0, now)
  call('HSET', key, 'state', 'waiting', 'worker', '', 'expires', 0)
  return 'waiting'
end

function Job.heartbeat(D, now, jid, worker, data, attempt)
  check(jid, 'Job(): no jid provided')
  check(worker, 'Heatbeat(): Arg "worker" missing')
  local v  -- (the attempt read only when given: each field read costs the server time)
  if attempt == nil then
    v = call('HMGET', Keys.job(jid), 'queue', 'worker', 'state', 'held_in')
  else
    v = call('HMGET', Keys.job(jid), 'queue', 'worker', 'state', 'held_in', 'attempt')
  end
  local job = {queue = v[1] or nil, worker = v[2] or nil, state = v[3] or nil,
    held_in = v[4] or nil}
  local expires = now + Config.heartbeat(job.queue or '')
  local decoded = nil
  if data ~= nil then decoded = decode(data) or nil end  -- JSON false: no data (reference)
  if job.worker == nil then refuse_job(D, 'heartbeat_missing', jid, job) end
  Job.check_attempt('Heartbeat', jid, attempt, v[5])
  if job.state ~= 'running' then refuse_job(D, 'heartbeat_state', jid, job) end
  if job.worker ~= worker or job.worker == '' then
    refuse_job(D, 'heartbeat_worker', jid, job)
  end

  local key = Keys.job(jid)
  if decoded ~= nil then
    call('HSET', key, 'expires', expires, 'worker', worker, 'data', cjson.encode(decoded))
  else
    call('HSET', key, 'expires', expires, 'worker', worker)
  end
  call('ZADD', Keys.worker_jobs(worker), expires, jid)
  if D.heartbeat_registers_worker then call('ZADD', Keys.workers(), now, worker) end
  call('ZADD', Keys.queue(Job.home(job, jid), 'locks'), expires, jid)
  return expires
end

function Job.timeout(D, now, jids)
  local jobs, seen = {}, {}
  for i, jid in ipairs(jids) do
    local job = Job.read(jid, {'queue', 'state', 'worker', 'held_in'})
    if job.queue == nil then refuse(D, 'timeout_missing', {jid = jid}) end
    -- a repeated jid is no longer running by its turn
    check(job.state == 'running' and not seen[jid], 'Timeout(): Job ' .. jid .. ' not running')
    jobs[i], seen[jid] = job, true
  end
  for i, jid in ipairs(jids) do
    local job = jobs[i]
    History.append(jid, now, 'timed-out')
    local home = Job.home(job, jid)
    call('ZREM', Keys.queue(home, 'locks'), jid)
    Throttle.release_all(jid, now)
    call('ZADD', Keys.queue(home, 'work'), '+inf', jid)
    Groups.enter(home, jid, '+inf')
    if D.timeout_clears_worker then
      call('HSET', Keys.job(jid), 'state', 'stalled', 'expires', 0, 'worker', '')
    else
      call('HSET', Keys.job(jid), 'state', 'stalled', 'expires', 0)
    end
    Events.lock_lost(jid, job.worker or '')
  end
end

---------------------------------------------------------------------------------------------
-- lock expiry (used by pop)

-- INVALIDATE: expired locks of a queue, oldest first. The first pop after expiry warns
-- (courtesy step); the first pop after the grace period reclaims the job, spending a retry,
-- or fails it when none is left. Returns the reclaimed jids.
function Job.invalidate(D, queue, now, count)
  local reclaimed = {}
  if count <= 0 then return reclaimed end
  local expired = call('ZRANGEBYSCORE', Keys.queue(queue, 'locks'), '-inf', now,
    'LIMIT', 0, count)
  local grace = Config.number('grace-period')
  for _, jid in ipairs(expired) do
    local key = Keys.job(jid)
    local job = Job.read(jid, {'worker', 'grace', 'queue', 'held_in', 'dedup', 'klass'})
    local worker = job.worker or ''
    call('ZREM', Keys.worker_jobs(worker), jid)
    local warned = job.grace == '1'
    if grace <= 0 or not warned then
      Events.if_tracked('stalled', jid)
      History.append(jid, now, 'timed-out')
      call('HSET', key, 'grace', 1)
      Events.lock_lost(jid, worker)
      call('ZADD', Keys.queue(queue, 'locks'), now + grace, jid)
      Stats.count(queue, now, {retries = 1})
    end
    if grace <= 0 or warned then
      call('HDEL', key, 'grace')
      local remaining = call('HINCRBY', key, 'remaining', -1)
      if remaining < 0 then
        call('ZREM', Keys.queue(queue, 'work'), jid)
        call('ZREM', Keys.queue(queue, 'locks'), jid)
        call('ZREM', Keys.queue(queue, 'scheduled'), jid)
        Throttle.release_all(jid, now)
        local group = 'failed-retries-' .. tostring(job.queue)
        local message = exhausted_message(queue)
        History.append(jid, now, 'failed', {group = group})
        call('HSET', key, 'state', 'failed', 'worker', '', 'expires', '',
          'failure', failure_text(group, message, now, ''))
        Job.settle_home(jid, job)
        join_failure_group(jid, group)
        Dedup.release(jid, job.dedup)
        Batch.ended(now, jid, 'failed')
        Events.if_tracked('failed', jid)
        Events.failed(jid, group, message, worker)
        Stats.count(queue, now, {failures = 1, failed = 1}, job.klass)
        Flows.failed(now, jid, D)
      else
        reclaimed[#reclaimed + 1] = jid
      end
    end
  end
  return reclaimed
end
