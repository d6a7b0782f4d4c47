-- Cron schedules (aqless's own). Lua has no time zone database, so the client computes a
-- template's fire times from its `cron` and `tz` fields and stores them in ql:cron:<jid>
-- (a sorted set of unix times, each its own score). The spawner takes the next fire time
-- from there instead of adding `interval`, which stays the fallback for a schedule that
-- ran dry (and is all another qless client sees). ql:crons holds each cron template by the
-- time its schedule wants topping up (aqless workers do it, see aqless.schedules).

local Cron = {}

function Keys.cron(jid) return PREFIX .. 'cron:' .. jid end
function Keys.crons() return PREFIX .. 'crons' end

-- Drops the schedule of a template that is cancelled or re-made without one.
function Cron.forget(jid)
  call('DEL', Keys.cron(jid))
  call('ZREM', Keys.crons(), jid)
  call('HDEL', Keys.recurring(jid), 'cron', 'tz')
end

-- The first fire time to spawn when catching up from `at` (due) to `now`: `at` itself,
-- or, when more than `backlog` fire times are due (`at` included), the one that leaves the
-- last `backlog` of them, as many as an interval template spawns (recurring.lua).
function Cron.catch_up(jid, at, now, backlog)
  local key = Keys.cron(jid)
  call('ZREMRANGEBYSCORE', key, '-inf', at)
  if backlog == 0 then return at end
  local after_at = call('ZCOUNT', key, '-inf', now)
  if after_at < backlog then return at end
  local first = call('ZRANGEBYSCORE', key, '-inf', now, 'LIMIT', after_at - backlog, 1)
  return tonumber(first[1])
end

-- The fire time after `at` (consumed), or `at + interval` when the schedule ran dry.
function Cron.after(jid, at, interval)
  local key = Keys.cron(jid)
  call('ZREMRANGEBYSCORE', key, '-inf', at)
  local next = call('ZRANGE', key, 0, 0)[1]
  if next then return tonumber(next) end
  return at + interval
end

-- The first fire time from `cutoff` on (those before it dropped), or nil when none is left.
function Cron.first_from(jid, cutoff)
  local key = Keys.cron(jid)
  call('ZREMRANGEBYSCORE', key, '-inf', string.format('(%.17g', cutoff))
  local first = call('ZRANGE', key, 0, 0)[1]
  return first and tonumber(first)
end

local function fire_times(texts)
  local times = {}
  for i, text in ipairs(texts) do
    local t = number(text)
    check(t, 'Cron(): Arg "time" not a number: ' .. tostring(text))
    times[i] = t
  end
  return times
end

local function add_times(jid, times, after)
  local key = Keys.cron(jid)
  for _, t in ipairs(times) do
    if after == nil or t > after then call('ZADD', key, t, string.format('%.17g', t)) end
  end
end

-- A schedule's arguments checked: the refill time and the fire times as numbers.
local function parse_schedule(jid, cron, tz, refill_text, time_texts)
  local refill = number(refill_text)
  check(jid, 'Recurring(): no jid provided')
  check(cron and cron ~= '', 'Cron(): Arg "cron" missing')
  check(tz and tz ~= '', 'Cron(): Arg "tz" missing')
  check(refill, 'Cron(): Arg "refill" not a number: ' .. tostring(refill_text))
  return refill, fire_times(time_texts)
end

-- The schedule a registration's options name (aqless's `queue.upsertRecurring`: cron, tz,
-- refill and times, a JSON list), checked as recurringJob.setCron's; nil without a cron.
function Cron.from_options(jid, o)
  if o.cron == nil then return nil end
  local times = optional_list(o.times, {}, 'Cron(): Arg "times" not JSON array: ')
  local refill, fire = parse_schedule(jid, o.cron, o.tz, o.refill, times)
  check(#fire > 0, 'Cron(): no fire time given')
  return {cron = o.cron, tz = o.tz, refill = refill, times = fire}
end

-- `jid cron tz refill time...`: the template spawns at these times from now on (the first
-- one next), its schedule to be topped up at `refill`.
function Cron.set(jid, cron, tz, refill_text, time_texts)
  local refill, times = parse_schedule(jid, cron, tz, refill_text, time_texts)
  check(#times > 0, 'Cron(): no fire time given')
  local queue = field(call('HGET', Keys.recurring(jid), 'queue'))
  check(queue, 'Recur(): No recurring job ' .. jid)
  Cron.start(jid, queue, cron, tz, refill, times)
  return 1
end

-- Template `jid` of `queue` spawns at `times` (checked, not empty) from now on, the first
-- next, its schedule to be topped up at `refill`.
function Cron.start(jid, queue, cron, tz, refill, times)
  call('DEL', Keys.cron(jid))
  add_times(jid, times, nil)
  local first = call('ZRANGE', Keys.cron(jid), 0, 0)[1]
  call('ZREM', Keys.cron(jid), first)
  call('ZADD', Keys.queue(queue, 'recur'), tonumber(first), jid)
  call('HSET', Keys.recurring(jid), 'cron', cron, 'tz', tz)
  call('ZADD', Keys.crons(), refill, jid)
end

-- `jid cron tz refill time...`: adds the times after the next spawn, if the template still
-- has this cron and tz (so a top-up computed before a change is dropped); 1 if it had.
function Cron.extend(jid, cron, tz, refill_text, time_texts)
  local refill, times = parse_schedule(jid, cron, tz, refill_text, time_texts)
  local queue, stored_cron, stored_tz = unpack(call('HMGET', Keys.recurring(jid), 'queue',
    'cron', 'tz'))
  if stored_cron ~= cron or stored_tz ~= tz then return 0 end
  local next = call('ZSCORE', Keys.queue(queue, 'recur'), jid)
  add_times(jid, times, next and tonumber(next))
  call('ZADD', Keys.crons(), refill, jid)
  return 1
end

-- The templates whose schedule wants topping up at `now`, each claimed for `lease` seconds
-- (another worker leaves it alone meanwhile): JSON [[jid, cron, tz, last fire time]...].
function Cron.refills(now, lease)
  local seconds = number(lease)
  check(seconds and seconds > 0, 'Cron(): Arg "lease" not a positive number: ' .. tostring(lease))
  local due = call('ZRANGEBYSCORE', Keys.crons(), '-inf', now, 'LIMIT', 0, 100)
  local found = {}
  for _, jid in ipairs(due) do
    local queue, cron, tz = unpack(call('HMGET', Keys.recurring(jid), 'queue', 'cron', 'tz'))
    if cron then
      call('ZADD', Keys.crons(), now + seconds, jid)
      local last = call('ZRANGE', Keys.cron(jid), -1, -1)[1]
        or call('ZSCORE', Keys.queue(queue, 'recur'), jid) or now
      found[#found + 1] = {jid, cron, tz, tonumber(last)}
    else
      call('ZREM', Keys.crons(), jid)
    end
  end
  return cjson.encode(found)
end

-- The next `count` spawn times of a template, cron or interval alike: a JSON list.
function Cron.next_runs(jid, count)
  check(jid, 'Recurring(): no jid provided')
  local n = number(count)
  check(n and n >= 1, 'Cron(): Arg "count" not a positive number: ' .. tostring(count))
  local queue, interval, cron = unpack(call('HMGET', Keys.recurring(jid), 'queue', 'interval',
    'cron'))
  if not queue then return '[]' end
  local at = call('ZSCORE', Keys.queue(queue, 'recur'), jid)
  if not at then return '[]' end
  local times = {tonumber(at)}
  if cron then
    for _, t in ipairs(call('ZRANGEBYSCORE', Keys.cron(jid), '(' .. at, '+inf', 'LIMIT', 0, n - 1)) do
      times[#times + 1] = tonumber(t)
    end
  end
  local every = tonumber(interval) or 0
  while #times < n and every > 0 do times[#times + 1] = times[#times] + every end
  return cjson.encode(times)
end
