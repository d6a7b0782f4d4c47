-- Recurring jobs: templates in ql:r:<jid>, scheduled in ql:q:<queue>-recur by their next
-- spawn time, spawned as <jid>-<n> by pop and peek.

local TEMPLATE_FIELDS = {'jid', 'klass', 'state', 'queue', 'priority', 'interval', 'retries',
  'count', 'data', 'tags', 'backlog', 'throttles', 'cron', 'tz'}

-- SPAWN: creates the jobs due from the queue's templates, catching up on missed spawns
-- (at most `backlog` of them when set, none older than the catch-up window), at most `limit`
-- jobs in all; each due time is decided by the template's policy (schedules.lua).
function Recurring.spawn(D, queue, now, limit)
  if limit <= 0 then return end
  local recur = Keys.queue(queue, 'recur')
  local due = call('ZRANGEBYSCORE', recur, 0, now, 'LIMIT', 0, limit)
  local spawned = 0
  for _, id in ipairs(due) do
    local t = read_hash(Keys.recurring(id), Recurring.SPAWN_FIELDS)
    local interval = tonumber(t.interval) or 0
    local at = Recurring.first_due(id, t, math.floor(tonumber(call('ZSCORE', recur, id))), now)
    spawned = spawned + Recurring.release(D, id, t, queue, now)
    while at <= now and spawned < limit do
      spawned = spawned + Recurring.fire(D, id, t, queue, at, now)
      at = t.cron and Cron.after(id, at, interval) or at + interval
    end
    call('ZADD', recur, at, id)
  end
end

-- A run of template `id` (`t`: its fields) due at `at`, put in `queue` at `now`: waiting, or
-- scheduled when its jitter (`jittered`) puts its start after `now`. Returns its jid.
function Recurring.make_run(D, id, t, queue, at, now, jittered)
  t.count = call('HINCRBY', Keys.recurring(id), 'count', 1)
  local child = id .. '-' .. t.count
  local priority, retries = tonumber(t.priority) or 0, tonumber(t.retries) or 0
  for _, tag in ipairs(Tags.parse(t.tags)) do Tags.on(child, tag, now) end
  local start = at
  if jittered then start = at + Recurring.jitter(id, at, t.jitter) end
  local state = start > now and 'scheduled' or 'waiting'
  call('HSET', Keys.job(child), 'jid', child, 'klass', t.klass or '',
    'data', t.data or '{}', 'priority', priority, 'tags', t.tags or '{}',
    'state', state, 'worker', '', 'expires', 0, 'queue', queue, 'retries', retries,
    'remaining', retries, 'time', string.format('%.20f', at), 'spawned_from_jid', id)
  if t.throttles then call('HSET', Keys.job(child), 'throttles', t.throttles) end
  History.put(D, child, at, queue)
  if state == 'scheduled' then
    call('ZADD', Keys.queue(queue, 'scheduled'), start, child)
  else
    Job.to_work(queue, child, priority, at)
  end
  return child
end

-- Validates the arguments of `recur` (classic: queue jid klass data 'interval' interval
-- offset [name value]...) or `queue.recurAtInterval` (the same without the type word).
local function parse_recur(D, a)
  local queue, jid, klass, data = a[1], a[2], a[3], a[4]
  check(queue, 'Queue(): no queue name provided')
  if jid == nil then refuse(D, 'recur_jid') end
  if klass == nil then refuse(D, 'recur_klass') end
  local at = 5
  if D == CLASSIC then
    check(a[5], 'RecurringJob On(): Arg "spec" missing')
    at = 6
  end
  if decode(data) == false then refuse(D, 'recur_data', {value = data}) end
  if D == CLASSIC then
    check(a[5] == 'interval', 'Recur(): schedule type "' .. a[5] .. '" unknown')
  end
  local interval, offset = number(a[at]), number(a[at + 1])
  check(interval, 'Recur(): Arg "interval" not a number: ' .. tostring(a[at]))
  check(offset, 'Recur(): Arg "offset" not a number: ' .. tostring(a[at + 1]))
  check(interval > 0, 'Recur(): Arg "interval" must be greater than 0')
  local first_option = at + 2
  if a.n >= first_option and (a.n - first_option + 1) % 2 == 1 then
    refuse(D, 'recur_odd', {value = (a.n - first_option + 1) .. ' option arguments'})
  end
  local o = options(a, first_option)
  if not D.throttle_options and o.throttles ~= nil then o.throttles = nil end
  -- checked in the reference's order
  local tags = optional_list(o.tags, {}, 'Recur(): Arg "tags" must be JSON string array: ')
  local priority = optional_number(o.priority, 0, 'Recur(): Arg "priority" not a number: ')
  local retries = whole(optional_number(o.retries, 0, 'Recur(): Arg "retries" not a number: '))
  local backlog = optional_number(o.backlog, 0, 'Recur(): Arg "backlog" not a number: ')
  if backlog < 0 then raise('Recur(): Arg "backlog" must not be negative: ' .. o.backlog) end
  local throttles = optional_list(o.throttles, {}, 'Recur(): Arg "throttles" not JSON array: ')
  return {queue = queue, jid = jid, klass = klass, data = data, interval = interval,
    offset = offset, tags = tags, priority = priority, retries = retries, backlog = backlog,
    throttles = throttles, options = o, policy = Recurring.parse_policy(o)}
end

-- Writes template `p` (its spawn count kept), out of its old queue's schedule; the caller
-- places it in its new queue's. Returns the old queue (nil for a new template).
local function save_template(now, p)
  local key = Keys.recurring(p.jid)
  local old = call('HMGET', key, 'count', 'queue')
  local old_queue = field(old[2])
  if old_queue ~= nil then call('ZREM', Keys.queue(old_queue, 'recur'), p.jid) end
  -- reqless drops the old queue's bare name here (not its throttle id): a quirk kept as is
  local throttles = Throttle.list_for(p.throttles, old_queue, p.queue)
  call('HSET', key, 'jid', p.jid, 'klass', p.klass, 'data', p.data, 'priority', p.priority,
    'tags', cjson.encode(p.tags), 'state', 'recur', 'queue', p.queue, 'type', 'interval',
    'count', tonumber(field(old[1])) or 0, 'interval', p.interval, 'retries', p.retries,
    'backlog', p.backlog, 'throttles', cjson.encode(throttles))
  Recurring.save_policy(key, p.policy)
  Job.register_queue(p.queue, now)
  return old_queue
end

function Recurring.recur(D, now, a)
  local p = parse_recur(D, a)
  Cron.forget(p.jid)
  save_template(now, p)
  call('ZADD', Keys.queue(p.queue, 'recur'), now + p.offset, p.jid)
  return p.jid
end

-- Registers template `jid` or updates the one registered: class, data, queue and options
-- as given; its next spawn time kept unless its schedule changed (another interval, or
-- another cron or tz), when it starts over as a new template's would.
function Recurring.upsert(D, now, a)
  local p = parse_recur(D, a)
  local schedule = Cron.from_options(p.jid, p.options)
  local key = Keys.recurring(p.jid)
  local old = call('HMGET', key, 'queue', 'interval', 'cron', 'tz')
  local next = old[1] and call('ZSCORE', Keys.queue(old[1], 'recur'), p.jid)
  local same
  if schedule then
    same = old[3] == schedule.cron and old[4] == schedule.tz
  else
    same = not old[3] and tonumber(old[2]) == p.interval
  end
  if not (same and next) then Cron.forget(p.jid) end
  save_template(now, p)
  if same and next then
    call('ZADD', Keys.queue(p.queue, 'recur'), next, p.jid)
  elseif schedule then
    Cron.start(p.jid, p.queue, schedule.cron, schedule.tz, schedule.refill, schedule.times)
  else
    call('ZADD', Keys.queue(p.queue, 'recur'), now + p.offset, p.jid)
  end
  return p.jid
end

function Recurring.object(D, jid)
  check(jid, 'Recurring(): no jid provided')
  local f = read_hash(Keys.recurring(jid), TEMPLATE_FIELDS)
  if f.jid == nil then return nil end
  local object = {
    jid = f.jid,
    klass = f.klass or '',
    state = f.state or 'recur',
    queue = f.queue or '',
    priority = tonumber(f.priority) or 0,
    interval = tonumber(f.interval) or 0,
    retries = tonumber(f.retries) or 0,
    count = tonumber(f.count) or 0,
    data = f.data or '{}',
    tags = decode_stored(f.tags) or {},
    backlog = tonumber(f.backlog) or 0,
  }
  if D.show_throttles then object.throttles = decode_stored(f.throttles) or {} end
  if f.cron then object.cron, object.tz = f.cron, f.tz end
  Recurring.policy_object(jid, object)
  return object
end

local UPDATE_NUMBERS = {priority = true, interval = true, retries = true}

-- `recur.update jid [name value]...`: every option is validated before any is applied.
function Recurring.update(D, now, a)
  local jid = a[1]
  check(jid, 'Recurring(): no jid provided')
  local key = Keys.recurring(jid)
  check(call('EXISTS', key) == 1, 'Recur(): No recurring job ' .. jid)
  local changes = {}
  for i = 2, a.n, 2 do
    local name, value = a[i], a[i + 1]
    check(value, 'No value provided for ' .. name)
    local parsed = value
    if UPDATE_NUMBERS[name] then
      parsed = number(value)
      check(parsed, 'Recur(): Arg "' .. name .. '" must be a number: ' .. value)
      if name == 'retries' then parsed = whole(parsed) end
      if name == 'interval' then
        check(parsed > 0, 'Recur(): Arg "interval" must be greater than 0')
      end
    elseif name == 'backlog' then
      parsed = number(value)
      check(parsed, 'Recur(): Arg "backlog" not a number: ' .. value)
      check(parsed >= 0, 'Recur(): Arg "backlog" must not be negative: ' .. value)
    elseif name == 'data' then
      check(decode(value) ~= false, 'Recur(): Arg "data" is not JSON-encoded: ' .. value)
    elseif name == 'throttles' and D.throttle_options then
      parsed = string_list(decode(value))
      check(parsed, 'Recur(): Arg "throttles" is not JSON-encoded: ' .. value)
    elseif Recurring.UPDATE_POLICY[name] then
      parsed = Recurring.checked_update(name, value)
    elseif name ~= 'klass' and name ~= 'queue' then
      raise('Recur(): Unrecognized option "' .. name .. '"')
    end
    changes[#changes + 1] = {name, parsed}
  end
  for _, change in ipairs(changes) do
    local name, value = change[1], change[2]
    local queue = field(call('HGET', key, 'queue')) or ''
    if name == 'interval' then
      local old = tonumber(call('HGET', key, 'interval')) or 0
      call('ZINCRBY', Keys.queue(queue, 'recur'), value - old, jid)
      call('HSET', key, 'interval', value)
    elseif name == 'queue' then
      local score = call('ZSCORE', Keys.queue(queue, 'recur'), jid) or now
      call('ZREM', Keys.queue(queue, 'recur'), jid)
      call('ZADD', Keys.queue(value, 'recur'), score, jid)
      local throttles = Throttle.list_for(Throttle.parse(call('HGET', key, 'throttles')),
        Keys.queue_throttle(queue), value)
      call('HSET', key, 'queue', value, 'throttles', cjson.encode(throttles))
      Job.register_queue(value, now)
    elseif name == 'throttles' then
      call('HSET', key, 'throttles', cjson.encode(value))
    elseif Recurring.UPDATE_POLICY[name] then
      Recurring.apply_update(key, name, value)
    else
      call('HSET', key, name, value)
    end
  end
  return 1
end

local function template_tags(jid, missing)
  check(jid, 'Recurring(): no jid provided')
  local text = call('HGET', Keys.recurring(jid), 'tags')
  check(text, missing .. jid .. ' does not exist')
  return Tags.parse(text)
end

function Recurring.add_tags(D, jid, tags)
  local list = template_tags(jid, 'Tag(): Job ')
  local before = set_of(list)
  for _, tag in ipairs(tags) do
    -- only tags absent before this call: one given twice is appended twice (reference)
    if not before[tag] then list[#list + 1] = tag end
  end
  local text = D.recur_tags_list(list)
  call('HSET', Keys.recurring(jid), 'tags', text)
  return text
end

function Recurring.remove_tags(D, jid, tags)
  local list = template_tags(jid, 'Untag(): Job ')
  local text = cjson.encode(without(list, set_of(tags)))
  call('HSET', Keys.recurring(jid), 'tags', text)
  return text
end

function Recurring.cancel(jid)
  check(jid, 'Recurring(): no jid provided')
  local queue = call('HGET', Keys.recurring(jid), 'queue')
  if queue then
    call('ZREM', Keys.queue(queue, 'recur'), jid)
    call('DEL', Keys.recurring(jid))
  end
  call('DEL', Keys.backfilled(jid))
  Cron.forget(jid)
  return 1
end
