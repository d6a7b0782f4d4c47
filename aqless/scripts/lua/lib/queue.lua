-- Queues: pop and peek (with lock expiry, recurring spawns, scheduled promotion and
-- throttles), counts, listings by state, pause, unfail.

-- PROMOTE: due scheduled jobs become waiting (inserted at `now`).
function Queue.promote(queue, now, limit)
  if limit <= 0 then return end
  local scheduled = Keys.queue(queue, 'scheduled')
  local due = call('ZRANGEBYSCORE', scheduled, 0, now, 'LIMIT', 0, limit)
  if #due == 0 then return end
  for _, jid in ipairs(due) do
    local job = Job.read(jid, {'jid', 'priority'})
    if job.jid ~= nil then
      Job.to_work(queue, jid, tonumber(job.priority) or 0, now)
      call('HSET', Keys.job(jid), 'state', 'waiting')
    end
  end
  call_batched('ZREM', scheduled, due)
end

-- What a pop writes alike for every job it hands out, worked out once: the `popped`
-- history entry and the `time` field as text. (`expires` stays a number: the server writes
-- a number it is given with more digits than Lua's tostring.)
local function hand_out_texts(now, worker, expires)
  return {entry = History.pair_text(now, 'popped', 'worker', worker),
    time = string.format('%.20f', now), expires = expires}
end

-- (The fields' positions as upvalues: read from Job.at per use, they would cost a pop of
-- many jobs noticeably more. A block's locals do not count towards the chunk's limit.)
local hand_out
do
  local at = Job.at
  local JID, TIME, ATTEMPT, WORKER = at.jid, at.time, at.attempt, at.worker
  local EXPIRES, STATE, QUEUE, HELD_IN = at.expires, at.state, at.queue, at.held_in

  -- Hands a job to a worker: history, wait statistic, job fields (the caller adds the locks
  -- of all the jobs it hands out at the end). `job`: Job.read_for_pop's reply, completed as
  -- Job.read_full's; `texts`:
  -- hand_out_texts'. Returns false for a jid whose job hash is gone.
  function hand_out(queue, jid, job, worker, texts, now, waits)
    if not job[JID] then return false end
    History.push(jid, texts.entry)
    waits[#waits + 1] = now - (tonumber(job[TIME]) or now)
    -- every hand-out is a new attempt (aqless's own field: see Job.check_attempt)
    local attempt = math.floor(tonumber(job[ATTEMPT]) or 0) + 1
    call('HSET', Keys.job(jid), 'time', texts.time, 'worker', worker,
      'expires', texts.expires, 'state', 'running', 'attempt', attempt)
    job[ATTEMPT], job[WORKER], job[EXPIRES] = attempt, worker, texts.expires
    job[STATE] = 'running'
    -- held by a queue its `queue` field does not name (a retry into another queue)
    if job[QUEUE] ~= queue and job[HELD_IN] ~= queue then
      call('HSET', Keys.job(jid), 'held_in', queue)
    end
    Events.if_tracked('popped', jid)
    return true
  end
end

-- Records a handed-out job: its jid in `popped`, its fields in `known` (false for a jid
-- taken twice, as a job reclaimed and also back in the work set: its object reads it).
-- Returns `known`, made on the first job.
local function taken(popped, known, jid, job)
  popped[#popped + 1] = jid
  known = known or {}
  if known[jid] == nil then known[jid] = job else known[jid] = false end
  return known
end

-- Takes jobs waiting in the queue's work set for `worker`, until `count` are popped in all,
-- within their throttles and rate limits (a job a throttle holds back is parked in its
-- line), in at most max-pop-retry passes. Returns `known` (see `taken`).
local function take_waiting(now, queue, worker, count, grouped, rates, texts, popped, known,
    waits)
  local STATE, THROTTLES, RATE_LIMITS = Job.at.state, Job.at.throttles, Job.at.rate_limits
  local passes = Config.number(queue .. '-max-pop-retry', Config.number('max-pop-retry'))
  local work = Keys.queue(queue, 'work')
  -- the slots of several jobs on an unlimited throttle are added together
  local unlimited = nil
  if count > 1 then unlimited = {} end
  while #popped < count and passes > 0 do
    local batch, fields = nil, NOTHING  -- (fields: a grouped take's, read as it checked)
    if grouped then
      batch, fields = Groups.take(queue, count - #popped, now)
    else
      batch = call('ZREVRANGE', work, 0, count - #popped - 1)
    end
    if #batch == 0 then break end
    for i = 1, #batch do  -- (numeric: ipairs costs a call per step)
      local jid = batch[i]
      local job = fields[i] or Job.read_for_pop(jid)
      local state = job[STATE] or nil
      local throttles = Throttle.parse(job[THROTTLES] or nil)
      if RateLimit.defers(rates, queue, jid, state, job[RATE_LIMITS] or nil) then
        if known and known[jid] then known[jid] = false end
      elseif Throttle.try_acquire(jid, throttles, unlimited) then
        if hand_out(queue, jid, job, worker, texts, now, waits) then
          known = taken(popped, known, jid, job)
          RateLimit.take(rates, jid, job[RATE_LIMITS] or nil)
        end
      elseif state ~= nil then
        if known and known[jid] then known[jid] = false end
        Throttle.park(queue, jid, throttles, state, now)
      end
    end
    call_batched('ZREM', work, batch)
    passes = passes - 1
  end
  if unlimited ~= nil then Throttle.add_locks(unlimited) end
  return known
end

-- Pops up to `count` jobs for `worker`; returns the popped jids in order, and jid -> the
-- fields of each popped job as they are stored now (see `taken`), or nil. Rate limits cut
-- the count and defer jobs (ratelimit.lua; RateLimit.wait tells how long they hold back).
function Queue.pop_jids(D, now, queue, worker, count)
  local popped, waits, known = {}, {}, nil
  local rates = RateLimit.begin(now)
  if call('SISMEMBER', Keys.paused(), queue) == 1 then return popped, known end
  call('ZADD', Keys.workers(), now, worker)
  if D.max_concurrency then
    local maximum = Config.number(queue .. '-max-concurrency', 0)
    if maximum > 0 then
      local running = call('ZCOUNT', Keys.queue(queue, 'locks'), now, '+inf')
      count = math.min(math.max(0, maximum - running), count)
    end
  end
  -- a rate limit, a throttle's hash, recurring jobs: mostly none, and then one EXISTS
  -- answers the three questions the pop would ask one by one (nothing it writes before
  -- asking them creates any of these keys)
  local tid = Keys.queue_throttle(queue)
  local plain = Groups.exists_for_pop(queue, RateLimit.definition_key(tid),
    Keys.throttle(tid), Keys.queue(queue, 'recur')) == 0
  local grouped = Groups.is_grouped(queue)  -- (learnt by that EXISTS)
  if plain then
    RateLimit.learn_none(rates, tid)
    Throttle.learn_unlimited(tid)
  end
  count = RateLimit.room(rates, queue, count)
  if count <= 0 then
    RateLimit.finish(rates, popped, count)
    return popped, known
  end
  local expires = now + Config.heartbeat(queue)
  local texts = hand_out_texts(now, worker, expires)

  -- reclaimed jobs still hold their throttles: no acquisition
  local reclaimed = Job.invalidate(D, queue, now, count)
  local at = Job.at
  for _, jid in ipairs(reclaimed) do
    local job = Job.read_for_pop(jid)
    if hand_out(queue, jid, job, worker, texts, now, waits) then
      known = taken(popped, known, jid, job)
      RateLimit.take(rates, jid, job[at.rate_limits] or nil)
    end
  end
  if Throttle.available(tid) then
    if not plain then Recurring.spawn(D, queue, now, count - #reclaimed) end
    Queue.promote(queue, now, count - #reclaimed)
    known = take_waiting(now, queue, worker, count, grouped, rates, texts, popped, known, waits)
  end
  Queue.pop_end(now, queue, worker, expires, popped, waits, rates, count)
  return popped, known
end

-- The end of a pop of `count` jobs (also a pickup's, Worker.hand_over): the `popped` jobs
-- locked to `worker` until `expires`, their `waits` in the wait statistic, the group rates
-- and the rate limits (`rates`, RateLimit.begin's) told.
function Queue.pop_end(now, queue, worker, expires, popped, waits, rates, count)
  if #popped > 0 then
    zadd_batched(Keys.worker_jobs(worker), expires, popped)
    zadd_batched(Keys.queue(queue, 'locks'), expires, popped)
  end
  Stats.record(queue, 'wait', now, waits)
  Groups.rates.record(popped, now)
  RateLimit.finish(rates, popped, count)
end

-- A pop's arguments checked: its count as a whole number.
function Queue.pop_count(D, queue, worker, count)
  check(queue, 'Queue(): no queue name provided')
  check(worker, 'Pop(): Arg "worker" missing')
  local n = number(count)
  if n == nil then refuse(D, 'pop_count', {value = tostring(count)}) end
  return whole(n)
end

-- (`apart`: see Job.json; a pop with it is aqless's own, and presents each job's attempt)
function Queue.pop(D, now, queue, worker, count, apart)
  local n = Queue.pop_count(D, queue, worker, count)
  local popped, known = Queue.pop_jids(D, now, queue, worker, n)
  return Job.list_json(D, popped, known, apart, apart ~= nil)
end

-- The jids a pop would take, without taking them: expired locks first, then the work set
-- (recurring jobs are spawned and due scheduled jobs promoted on the way).
local function peek_jids(D, queue, now, offset, limit)
  local wanted = offset + limit
  local expired = call('ZRANGEBYSCORE', Keys.queue(queue, 'locks'), '-inf', now,
    'LIMIT', 0, wanted)
  local room = wanted - #expired
  Recurring.spawn(D, queue, now, room)
  Queue.promote(queue, now, room)
  local work = Keys.queue(queue, 'work')
  if offset > #expired then
    return call('ZREVRANGE', work, offset - #expired, offset - #expired + limit - 1)
  end
  local jids = expired
  if room > 0 then
    for _, jid in ipairs(call('ZREVRANGE', work, 0, room - 1)) do jids[#jids + 1] = jid end
  end
  local result = {}
  for i = offset + 1, math.min(#jids, offset + limit) do result[#result + 1] = jids[i] end
  return result
end

-- classic `peek queue count`
function Queue.peek(D, now, queue, count)
  check(queue, 'Queue(): no queue name provided')
  local n = number(count)
  check(n, 'Peek(): Arg "count" missing or not a number: ' .. tostring(count))
  n = whole(n)
  if n <= 0 then return D.list({}) end
  return Job.list_json(D, peek_jids(D, queue, now, 0, n))
end

-- reqless `queue.peek queue offset limit`
function Queue.peek_range(D, now, queue, offset, limit)
  check(queue, 'Queue(): no queue name provided')
  local first = number(offset)
  check(first, 'Peek(): Arg "offset" missing or not a number: ' .. tostring(offset))
  local n = number(limit)
  check(n, 'Peek(): Arg "limit" missing or not a number: ' .. tostring(limit))
  first, n = math.max(0, whole(first)), whole(n)
  if n <= 0 then return D.list({}) end
  return Job.list_json(D, peek_jids(D, queue, now, first, n))
end

-- The counts object of a queue (8 keys classic, 9 with `throttled` for reqless).
function Queue.counts(D, now, queue)
  local locks = Keys.queue(queue, 'locks')
  local stalled = call('ZCOUNT', locks, 0, now)
  Queue.promote(queue, now, call('ZCARD', Keys.queue(queue, 'scheduled')))
  local counts = {
    name = queue,
    waiting = call('ZCARD', Keys.queue(queue, 'work')),
    stalled = stalled,
    running = call('ZCARD', locks) - stalled,
    scheduled = call('ZCARD', Keys.queue(queue, 'scheduled')),
    depends = call('ZCARD', Keys.queue(queue, 'depends')),
    recurring = call('ZCARD', Keys.queue(queue, 'recur')),
    paused = call('SISMEMBER', Keys.paused(), queue) == 1,
  }
  if D.throttled_state then counts.throttled = call('ZCARD', Keys.queue(queue, 'throttled')) end
  return counts
end

function Queue.names()
  return call('ZRANGE', Keys.queues(), 0, -1)
end

function Queue.all_counts(D, now)
  local result = {}
  for i, queue in ipairs(Queue.names()) do result[i] = Queue.counts(D, now, queue) end
  return result
end

function Queue.length(now, queue)
  check(queue, 'Queue(): no queue name provided')
  return call('ZCARD', Keys.queue(queue, 'locks')) + call('ZCARD', Keys.queue(queue, 'work'))
    + call('ZCARD', Keys.queue(queue, 'scheduled'))
end

local function names_given(names, command)
  check(#names > 0, command .. '(): wrong number of arguments: give at least one name')
end

function Queue.pause(names)
  names_given(names, 'Pause')
  call_batched('SADD', Keys.paused(), names)
end

function Queue.unpause(names)
  names_given(names, 'Unpause')
  call_batched('SREM', Keys.paused(), names)
end

function Queue.forget(names)
  names_given(names, 'Forget')
  call_batched('ZREM', Keys.queues(), names)
end

-- An optional offset and count (paging arguments), validated with the given texts.
function Queue.page(offset, count, default_count, offset_text, count_text)
  local first = optional_number(offset, 0, offset_text)
  local n = optional_number(count, default_count, count_text)
  return whole(first), whole(n)
end

function Queue.completed(offset, count)
  return call('ZREVRANGE', Keys.completed(), offset, offset + count - 1)
end

-- Jids of a queue by state (`jobs <state> <queue>`, `queue.jobsByState`).
function Queue.jobs_by_state(D, now, state, queue, offset, count)
  local key = function(kind) return Keys.queue(queue, kind) end
  if state == 'running' then
    return call('ZRANGEBYSCORE', key('locks'), now, '+inf', 'LIMIT', offset, count)
  elseif state == 'stalled' then
    return call('ZRANGEBYSCORE', key('locks'), '-inf', now, 'LIMIT', offset, count)
  elseif state == 'scheduled' then
    Queue.promote(queue, now, call('ZCARD', key('scheduled')))
    return call('ZRANGE', key('scheduled'), offset, offset + count - 1)
  elseif state == 'depends' then
    return call('ZRANGE', key('depends'), offset, offset + count - 1)
  elseif state == 'throttled' and D.throttled_state then
    return call('ZRANGE', key('throttled'), offset, offset + count - 1)
  elseif state == 'recurring' then
    local low = 0
    if D == REQLESS then low = '-inf' end
    return call('ZRANGEBYSCORE', key('recur'), low, '+inf', 'LIMIT', offset, count)
  end
  raise('Jobs(): Unknown type "' .. state .. '"')
end

-- Moves the oldest failures of a group into a queue; returns how many moved.
function Queue.unfail(D, now, queue, group, count)
  if queue == nil then refuse(D, 'unfail_no_queue') end
  check(group, 'Unfail(): Arg "group" missing')
  local n = whole(optional_number(count, 25, 'Unfail(): Arg "count" not a number: '))
  if D.unfail_positive_count then
    check(n > 0, 'Unfail(): Arg "count" must be greater than zero')
  end
  if n <= 0 then return 0 end
  local list = Keys.failed(group)
  local jids = call('LRANGE', list, -n, -1)
  local moved = 0
  for _, jid in ipairs(jids) do
    local job = Job.read(jid, {'jid', 'retries', 'priority', 'held_in'})
    if job.jid ~= nil then
      History.put(D, jid, now, queue)
      call('HSET', Keys.job(jid), 'state', 'waiting', 'worker', '', 'expires', 0,
        'queue', queue, 'remaining', tonumber(job.retries) or 5)
      Job.to_work(queue, jid, tonumber(job.priority) or 0, now)
      if job.held_in ~= nil then call('HDEL', Keys.job(jid), 'held_in') end
      moved = moved + 1
    end
  end
  call('LTRIM', list, 0, -n - 1)
  if call('EXISTS', list) == 0 then call('SREM', Keys.failures(), group) end
  return moved
end

-- `failed` without a group: group -> number of failed jobs.
function Queue.failure_groups()
  local result = {}
  for _, group in ipairs(call('SMEMBERS', Keys.failures())) do
    result[group] = call('LLEN', Keys.failed(group))
  end
  return result
end

function Queue.failed_in_group(group, start, limit)
  local list = Keys.failed(group)
  return {total = call('LLEN', list), jobs = call('LRANGE', list, start, start + limit - 1)}
end
