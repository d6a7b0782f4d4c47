-- Rate limits: at most `limit` job starts in any window of `period` seconds, per queue and
-- per named limiter. A sliding-window log, so no window of that length ever holds more:
-- ql:rl:<id> holds `limit` and `period`, ql:rl:<id>-starts the starts still in the window
-- (score: the pop's time, member "<jid> <time>"), trimmed at every read. A queue's limiter id
-- is its throttle id, ql:q:<queue>; ql:rate_limits lists the ids that have a limit. A job
-- names its limiters at put (hash field `rate_limits`, a JSON list): a pop that finds one of
-- them full moves the job to the scheduled set until the limiter's next free start.
-- Two modes. `burst` (no `mode` field): up to `limit` starts at once, then none until the
-- oldest leaves the window (`limit` at the end of one window and `limit` at the start of
-- the next fall within one period, both ends counted). `smooth` (`mode` = smooth): starts
-- at least period/limit apart, and no window of `period`, both ends included, holds more
-- than `limit`; the log is the same, so a client that knows no mode still keeps the window.

-- RateLimit.wait: the wait the last pop found (see RateLimit.finish), for rateLimit.pop;
-- RateLimit.short: whether it took fewer jobs than it could have; RateLimit.held: whether
-- a rate limit held it back.
local RateLimit = {wait = nil, short = false, held = false}

local SMOOTH = 'smooth'
-- (a smooth limiter's free start comes this much after a start leaves its closed window)
local PAST = 1e-6

local function definition_key(id) return PREFIX .. 'rl:' .. id end
local function starts_key(id) return PREFIX .. 'rl:' .. id .. '-starts' end
local function ids_key() return PREFIX .. 'rate_limits' end

-- The starts in the window ending at `now` (and any after it). Pops from several workers
-- may reach the server out of the order of their `now`, so a start leaves the log only a
-- period after its window: a pop whose `now` is a little older still counts it.
local function used_at(id, period, now)
  local key = starts_key(id)
  call('ZREMRANGEBYSCORE', key, '-inf', now - 2 * period)
  return call('ZCOUNT', key, string.format('(%.6f', now - period), '+inf')
end

-- A smooth limiter's window: [now - period, +inf), its start included (a start leaves it
-- only after a whole period), at full precision.
local function closed_from(period, now) return string.format('%.17g', now - period) end

-- The starts in a smooth limiter's window, and the newest start (nil for none).
local function smooth_used_at(id, period, now)
  local key = starts_key(id)
  call('ZREMRANGEBYSCORE', key, '-inf', now - 2 * period)
  local newest = call('ZRANGE', key, 0, 0, 'REV', 'WITHSCORES')
  return call('ZCOUNT', key, closed_from(period, now), '+inf'), tonumber(newest[2])
end

-- A limiter as one call sees it: its definition, the starts in its window, the starts this
-- call took; false when it has no limit. A smooth one also has `gap` (period/limit) and
-- `newest` (its newest start before this call, or nil).
local function read_limiter(id, now)
  local v = call('HMGET', definition_key(id), 'limit', 'period', 'mode')
  local limit, period = number(v[1]), number(v[2])
  if limit == nil or period == nil then return false end
  local l = {id = id, limit = limit, period = period, taken = {}, smooth = v[3] == SMOOTH}
  if l.smooth then
    l.gap = period / limit
    l.used, l.newest = smooth_used_at(id, period, now)
  else
    l.used = used_at(id, period, now)
  end
  return l
end

-- Seconds from `now` until a smooth limiter's last start is `gap` old (0 when it is).
local function gap_wait(l, now)
  if #l.taken > 0 then return l.gap end
  if l.newest == nil then return 0 end
  local wait = l.newest + l.gap - now
  if wait <= 1e-9 then return 0 end  -- (a sum of float waits lands a hair short)
  return wait
end

-- The starts the limiter has room for at `now`: a smooth one at most one per call.
local function room(l, now)
  local free = l.limit - l.used - #l.taken
  if not l.smooth then return free end
  if free < 1 or gap_wait(l, now) > 0 then return 0 end
  return 1
end

-- Seconds from `now` until the limiter's window has a free start (0 when it has one now).
-- The starts this call took are the newest, at `now`.
local function window_wait(l, now)
  local rank = l.used + #l.taken - l.limit
  if rank < 0 then return 0 end
  local past = l.smooth and PAST or 0
  if rank >= l.used then return l.period + past end
  local from = l.smooth and closed_from(l.period, now) or string.format('(%.6f', now - l.period)
  local oldest = call('ZRANGEBYSCORE', starts_key(l.id), from, '+inf', 'WITHSCORES', 'LIMIT', rank, 1)
  return math.max(0, tonumber(oldest[2]) + l.period + past - now)
end

-- Seconds from `now` until the limiter has a free start (0 when it has one now).
local function wait_of(l, now)
  local wait = window_wait(l, now)
  if l.smooth then wait = math.max(wait, gap_wait(l, now)) end
  return wait
end

-- The state of one pop: each limiter read once, the starts it takes counted as it goes.
function RateLimit.begin(now)
  RateLimit.wait, RateLimit.short, RateLimit.held = nil, false, false
  return {now = now, seen = {}, full = {}}
end

local function note_wait(wait)
  if wait > 0 and (RateLimit.wait == nil or wait < RateLimit.wait) then RateLimit.wait = wait end
end

-- Another limit (a group's: grouprates.lua) held the pop back until `wait` seconds from
-- now (0: it did not, after all).
function RateLimit.hold(wait)
  if wait <= 0 then return end
  RateLimit.held = true
  note_wait(wait)
end

local function limiter(state, id)
  local l = state.seen[id]
  if l == nil then
    l = read_limiter(id, state.now)
    state.seen[id] = l
  end
  return l
end

-- The key that exists when `id` has a limit (a pop may ask several such questions at once),
-- and what a pop learnt when it does not.
function RateLimit.definition_key(id) return definition_key(id) end
function RateLimit.learn_none(state, id) state.seen[id] = false end

-- How many of `count` jobs the queue's limiter lets the pop start.
function RateLimit.room(state, queue, count)
  local l = limiter(state, Keys.queue_throttle(queue))
  if not l then return count end
  state.queue = l
  local free = math.max(0, math.floor(room(l, state.now)))
  if free < count then state.full[#state.full + 1] = l end
  return math.min(free, count)
end

local function limiter_ids(text)
  if text == nil then return nil end
  return string_list(decode_stored(text))
end

-- Defers a job whose limiters include a full one to the scheduled set, until that
-- limiter's next free start; returns whether it did.
-- (`job_state`, `rate_limits`: the job's fields.)
function RateLimit.defers(state, queue, jid, job_state, rate_limits)
  if rate_limits == nil or job_state == nil then return false end
  local ids = limiter_ids(rate_limits)
  if ids == nil then return false end
  for _, id in ipairs(ids) do
    local l = limiter(state, id)
    if l and room(l, state.now) < 1 then
      state.full[#state.full + 1] = l
      call('ZADD', Keys.queue(queue, 'scheduled'), state.now + wait_of(l, state.now), jid)
      call('HSET', Keys.job(jid), 'state', 'scheduled')
      return true
    end
  end
  return false
end

-- Counts a start of the job on each of its named limiters.
-- (`rate_limits`: the job's field.)
function RateLimit.take(state, jid, rate_limits)
  local ids = limiter_ids(rate_limits)
  if ids == nil then return end
  for _, id in ipairs(ids) do
    local l = limiter(state, id)
    if l then l.taken[#l.taken + 1] = jid end
  end
end

-- Records the pop's starts (`popped`: every jid it handed out, counted on the queue's
-- limiter, of the `count` it could take) and sets RateLimit.wait: the seconds until the
-- first of the limiters that held the pop back has a free start, or nil when none did.
function RateLimit.finish(state, popped, count)
  local now = state.now
  RateLimit.short = #popped < count
  RateLimit.held = RateLimit.held or #state.full > 0
  if state.queue then
    for _, jid in ipairs(popped) do state.queue.taken[#state.queue.taken + 1] = jid end
  end
  for _, l in ipairs(state.full) do note_wait(wait_of(l, now)) end
  for _, l in pairs(state.seen) do
    if l and #l.taken > 0 then
      local stamp, members = ' ' .. string.format('%.6f', now), {}
      for i, jid in ipairs(l.taken) do members[i] = jid .. stamp end
      zadd_batched(starts_key(l.id), now, members)
    end
  end
end

-- After a short pop: the wait until the queue's next scheduled job is due, if sooner (a
-- job deferred by a full limiter waits there, and so may a delayed one). A next job that
-- names limiters counts as held back by them.
function RateLimit.note_scheduled(queue, now)
  if not RateLimit.short then return end
  local head = call('ZRANGE', Keys.queue(queue, 'scheduled'), 0, 0, 'WITHSCORES')
  if head[2] == nil then return end
  note_wait(math.max(tonumber(head[2]) - now, 0.001))
  if call('HEXISTS', Keys.job(head[1]), 'rate_limits') == 1 then RateLimit.held = true end
end

-- put's `rate_limits` option: stored on the job, or cleared from a job put again without it.
function RateLimit.store(jid, ids, existed)
  if ids ~= nil then
    call('HSET', Keys.job(jid), 'rate_limits', cjson.encode(ids))
  elseif existed then
    call('HDEL', Keys.job(jid), 'rate_limits')
  end
end

function RateLimit.set(id, limit, period, mode)
  check(id, 'RateLimit(): no id provided')
  local n, seconds = number(limit), number(period)
  check(n and n >= 1, 'RateLimit(): Arg "limit" not a number of at least 1: ' .. tostring(limit))
  check(seconds and seconds > 0,
    'RateLimit(): Arg "period" not a number of seconds above 0: ' .. tostring(period))
  check(mode == nil or mode == 'burst' or mode == SMOOTH,
    'RateLimit(): Arg "mode" not burst or smooth: ' .. tostring(mode))
  call('HSET', definition_key(id), 'id', id, 'limit', whole(n), 'period', seconds)
  if mode == SMOOTH then
    call('HSET', definition_key(id), 'mode', SMOOTH)
  else
    call('HDEL', definition_key(id), 'mode')
  end
  call('SADD', ids_key(), id)
end

function RateLimit.delete(id)
  check(id, 'RateLimit(): no id provided')
  call('DEL', definition_key(id), starts_key(id))
  call('SREM', ids_key(), id)
end

-- {id, limit, period, used, wait, [mode]}: limit 0 for an id without a limit (a burst
-- limit's has no mode: the reply of a limit set without one is as it was).
function RateLimit.info(id, now)
  check(id, 'RateLimit(): no id provided')
  local l = read_limiter(id, now)
  if not l then return {id = id, limit = 0, period = 0, used = 0, wait = 0} end
  -- (built as before, then the mode: cjson's key order follows the table's making)
  local info = {id = id, limit = l.limit, period = l.period, used = l.used, wait = wait_of(l, now)}
  if l.smooth then info.mode = SMOOTH end
  return info
end

function RateLimit.all(now)
  local result = {}
  for _, id in ipairs(call('SMEMBERS', ids_key())) do result[#result + 1] = RateLimit.info(id, now) end
  table.sort(result, function(x, y) return x.id < y.id end)
  return result
end
