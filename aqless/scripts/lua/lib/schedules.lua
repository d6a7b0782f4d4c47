-- Schedules' policies (aqless's own, docs/protocol/CORE.md): fields of the template hash
-- beside the classic ones, which only aqless's spawner reads (another client's script spawns
-- as the classic fields say):
--   overlap      what a due run does while the template's last run is live (waiting,
--                scheduled, running...): skip, buffer_one, buffer_all (at most `backlog`
--                when set), cancel_other, allow_all (absent: allow_all)
--   catchup      seconds: a missed run due longer ago than this is dropped (absent: no limit)
--   pause_after  consecutive failed runs that pause the template (absent: never)
--   jitter       seconds: a run starts up to this much after its time, the same for the
--                same template and time (a hash of both)
--   paused       1 while paused: its due runs are dropped
--   failures     its runs' consecutive failures (a completed run resets it)
--   buffered     runs waiting for the live one to end (buffer_one, buffer_all)
-- The last run is `<jid>-<count>`. ql:rbackfill:<jid> holds the times a backfill made runs
-- for, so that each is made once.

function Keys.backfilled(jid) return PREFIX .. 'rbackfill:' .. jid end

Recurring.SPAWN_FIELDS = {'klass', 'data', 'priority', 'tags', 'retries', 'interval',
  'backlog', 'throttles', 'cron', 'count', 'overlap', 'catchup', 'jitter', 'paused',
  'buffered'}
Recurring.POLICY_FIELDS = {'overlap', 'catchup', 'pause_after', 'jitter'}
Recurring.OVERLAPS = {skip = true, buffer_one = true, buffer_all = true, cancel_other = true,
  allow_all = true}

-- A policy option `name` given as `value` (text): the value to store, or the refusal.
function Recurring.checked_policy(name, value)
  if name == 'overlap' then
    local refusal = 'Recur(): Arg "overlap" must be one of skip, buffer_one, buffer_all, cancel_other, allow_all: '
    check(Recurring.OVERLAPS[value], refusal .. tostring(value))
    return value
  end
  local n = number(value)
  check(n and n >= 0, 'Recur(): Arg "' .. name .. '" must be a number from 0: '
    .. tostring(value))
  if name == 'pause_after' then return whole(n) end
  return n
end

-- The policy options of a registration (`o`, by name), checked: {name, value} pairs.
function Recurring.parse_policy(o)
  local pairs_ = {}
  for _, name in ipairs(Recurring.POLICY_FIELDS) do
    if o[name] ~= nil then pairs_[#pairs_ + 1] = {name, Recurring.checked_policy(name, o[name])} end
  end
  return pairs_
end

-- Stores policy option `name` (checked): a default (allow_all, 0) as the field's absence.
function Recurring.store_policy(key, name, value)
  if value == 0 or value == 'allow_all' then
    call('HDEL', key, name)
  else
    call('HSET', key, name, value)
  end
end

-- Stores a registration's policy: the options given, the others back to their defaults
-- (its state, paused, failures and buffered runs, is kept).
function Recurring.save_policy(key, policy)
  call('HDEL', key, unpack(Recurring.POLICY_FIELDS))
  for _, pair in ipairs(policy) do Recurring.store_policy(key, pair[1], pair[2]) end
end

-- The options recurringJob.update takes beyond the classic ones.
Recurring.UPDATE_POLICY = {overlap = true, catchup = true, pause_after = true, jitter = true,
  paused = true}

function Recurring.checked_update(name, value)
  if name ~= 'paused' then return Recurring.checked_policy(name, value) end
  check(value == '0' or value == '1', 'Recur(): Arg "paused" must be 0 or 1: '
    .. tostring(value))
  return value == '1'
end

-- Applies an update's policy option (checked); `paused` 0 resumes, its failures forgotten.
function Recurring.apply_update(key, name, value)
  if name ~= 'paused' then return Recurring.store_policy(key, name, value) end
  if value then
    call('HSET', key, 'paused', 1)
  else
    call('HDEL', key, 'paused', 'failures')
  end
end

-- The template's policy fields as its object shows them (only those set, so that the
-- object of a template without any is the classic one, byte for byte).
Recurring.SHOWN_POLICY = {'overlap', 'catchup', 'pause_after', 'jitter', 'paused', 'failures',
  'buffered'}
function Recurring.policy_object(jid, object)
  local values = call('HMGET', Keys.recurring(jid), unpack(Recurring.SHOWN_POLICY))
  for i, name in ipairs(Recurring.SHOWN_POLICY) do
    if values[i] then
      if name == 'overlap' then
        object.overlap = values[i]
      elseif name == 'paused' then
        object.paused = true
      else
        object[name] = tonumber(values[i])
      end
    end
  end
end

-- The first due time to spawn from `at` (the template's next time, due): past the runs
-- `backlog` leaves out, and past those older than the catch-up window.
function Recurring.first_due(id, t, at, now)
  local interval, backlog = tonumber(t.interval) or 0, tonumber(t.backlog) or 0
  if t.cron then
    at = Cron.catch_up(id, at, now, backlog)
  elseif backlog ~= 0 and interval > 0 then
    local missed = (now - at) / interval
    if missed > backlog then at = at + math.ceil(missed - backlog) * interval end
  end
  local window = tonumber(t.catchup) or 0
  if window <= 0 or at >= now - window then return at end
  local first = t.cron and Cron.first_from(id, now - window)
  if first then return first end
  if interval <= 0 then return now end
  return at + math.ceil((now - window - at) / interval) * interval
end

-- Whether run `jid` is live: neither ended (complete, failed) nor gone.
function Recurring.live(jid)
  local state = call('HGET', Keys.job(jid), 'state')
  return state ~= false and state ~= 'complete' and state ~= 'failed'
end

-- The template's last run, if it is live.
function Recurring.live_run(id, t)
  local count = tonumber(t.count) or 0
  if count == 0 then return nil end
  local last = id .. '-' .. t.count
  if Recurring.live(last) then return last end
  return nil
end

-- The run due at `at`, decided by the template's policy: made (1) or not (0: dropped, or
-- buffered behind the live run).
function Recurring.fire(D, id, t, queue, at, now)
  if t.paused then return 0 end
  local overlap = t.overlap or 'allow_all'
  local live = overlap ~= 'allow_all' and Recurring.live_run(id, t)
  if live then
    if overlap == 'skip' then return 0 end
    if overlap == 'cancel_other' then
      Recurring.cancel_run(D, now, live)
    else
      local most = overlap == 'buffer_one' and 1 or (tonumber(t.backlog) or 0)
      local buffered = tonumber(t.buffered) or 0
      if most == 0 or buffered < most then
        t.buffered = call('HINCRBY', Keys.recurring(id), 'buffered', 1)
      end
      return 0
    end
  end
  Recurring.make_run(D, id, t, queue, at, now, true)
  return 1
end

-- Cancels the live run `jid` for a new one (cancel_other), unless a job depends on it or it
-- belongs to a flow (cancelling it would take those with it): then it runs on beside.
function Recurring.cancel_run(D, now, jid)
  if call('EXISTS', Keys.dependents(jid)) == 1 then return end
  local flow = call('HMGET', Keys.job(jid), 'flow_parent', 'flow_children')
  if flow[1] or flow[2] then return end
  Job.cancel(D, now, {jid})
end

-- Starts a buffered run when the template has one and no live run: 1 if it did.
function Recurring.release(D, id, t, queue, now)
  if (tonumber(t.buffered) or 0) <= 0 or t.paused or Recurring.live_run(id, t) then
    return 0
  end
  t.buffered = call('HINCRBY', Keys.recurring(id), 'buffered', -1)
  Recurring.make_run(D, id, t, queue, now, now, false)
  return 1
end

-- The hook of complete and of the fail paths: run `jid` of template `id` ended (`ok`: it
-- completed). A completion resets the failures; a failure counts towards `pause_after`;
-- then a buffered run starts.
function Recurring.ended(D, now, id, jid, ok)
  local key = Keys.recurring(id)
  local f = read_hash(key, {'queue', 'pause_after', 'failures', 'buffered'})
  if f.queue == nil then return end
  if ok then
    if f.failures then call('HDEL', key, 'failures') end
  elseif (tonumber(f.pause_after) or 0) > 0 then
    if call('HINCRBY', key, 'failures', 1) >= tonumber(f.pause_after) then
      call('HSET', key, 'paused', 1)
    end
  end
  if (tonumber(f.buffered) or 0) > 0 then
    local t = read_hash(key, Recurring.SPAWN_FIELDS)
    Recurring.release(D, id, t, f.queue, now)
  end
end

-- A run's start after its time `at`: within [0, `bound`) seconds, the same for the same
-- template and time.
function Recurring.jitter(id, at, bound)
  local most = tonumber(bound) or 0
  if most <= 0 then return 0 end
  local digest = redis.sha1hex(id .. '@' .. string.format('%.17g', at))
  return most * tonumber(digest:sub(1, 8), 16) / 4294967296
end

-- `jid time...`: a run of the template for each unix time not backfilled before (none after
-- `now`); returns how many it made.
function Recurring.backfill(D, now, jid, texts)
  check(jid, 'Recurring(): no jid provided')
  local times = {}
  for i, text in ipairs(texts) do
    local at = number(text)
    check(at, 'Backfill(): Arg "time" not a number: ' .. tostring(text))
    check(at <= now, 'Backfill(): Arg "time" in the future: ' .. tostring(text))
    times[i] = at
  end
  local key = Keys.recurring(jid)
  local t = read_hash(key, Recurring.SPAWN_FIELDS)
  local queue = field(call('HGET', key, 'queue'))
  check(queue, 'Recur(): No recurring job ' .. jid)
  local made = 0
  for _, at in ipairs(times) do
    if call('ZADD', Keys.backfilled(jid), 'NX', at, string.format('%.17g', at)) == 1 then
      Recurring.make_run(D, jid, t, queue, at, now, false)
      made = made + 1
    end
  end
  return made
end
