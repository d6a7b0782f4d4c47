-- Per-group rate limits (aqless's own): at most `limit` starts of a group's jobs in any
-- window of `period` seconds, counted by aqless's pop as ratelimit.lua counts a burst
-- limiter's starts (a sliding-window log). A group over its limit is passed over by the
-- turns (groups.lua); its jobs wait where they are.
--   ql:q:<q>-group-rates         hash: <g> -> '<limit> <period>', for the groups with a rate
--                                limit (each also keeps an entry in ql:q:<q>-group-settings,
--                                '1 0' at least, so a pop asks only where the queue has
--                                settings)
--   ql:q:<q>-group-starts:<g>    zset: the group's starts (score: the pop's time, member
--                                '<jid> <time>'), trimmed at every read
-- Only the jobs a pop takes in turn from the group and hands out count: a stalled job
-- handed out again (it was a start already) and a job a pop took but could not start
-- (a full throttle or named rate limit) do not.

-- A part of Groups (Groups.rates), whose functions call it: the script's top-level locals
-- are few. What one call learns, cleared as it starts:
--   known     queue -> whether any of its groups has a rate limit
--   paced     '<queue> <group>' -> the group's pace as this pop sees it (false: none)
--   pending   jid -> the pace of the group this pop took it from
--   any       whether this pop met a group with a rate limit
function Groups.rates.forget()
  local rates = Groups.rates
  rates.known, rates.paced, rates.pending, rates.any = {}, {}, {}, false
end

function Groups.rates.key(queue) return Keys.queue(queue, 'group-rates') end
function Groups.rates.starts_key(queue, group)
  return Keys.queue(queue, 'group-starts:' .. group)
end

-- A group's limit and period from its stored text ('<limit> <period>'), or nil.
function Groups.rates.parse(text)
  if not text then return nil end
  local limit, period = string.match(text, '^(%S+) (%S+)$')
  limit, period = number(limit), number(period)
  if limit == nil or period == nil or limit < 1 or period <= 0 then return nil end
  return limit, period
end

-- The group's starts in the window ending at `now` (and any after it). As ratelimit.lua's
-- used_at: a start leaves the log only a period after its window, for the pops of other
-- workers whose `now` is a little older.
function Groups.rates.used_at(key, period, now)
  call('ZREMRANGEBYSCORE', key, '-inf', now - 2 * period)
  return call('ZCOUNT', key, string.format('(%.6f', now - period), '+inf')
end

-- Whether any group of `queue` has a rate limit (asked once a call).
function Groups.rates.exist(queue)
  local known = Groups.rates.known[queue]
  if known == nil then
    known = call('EXISTS', Groups.rates.key(queue)) == 1
    Groups.rates.known[queue] = known
  end
  return known
end

-- A group's pace as a pop sees it at `now`: its limit, period, starts in the window, and
-- what this pop took and started of it; false for a group without a rate limit.
function Groups.rates.read_pace(queue, group, now)
  if not Groups.rates.exist(queue) then return false end
  local limit, period = Groups.rates.parse(call('HGET', Groups.rates.key(queue), group))
  if limit == nil then return false end
  local key = Groups.rates.starts_key(queue, group)
  local used = Groups.rates.used_at(key, period, now)
  return {key = key, limit = limit, period = period, used = used, taken = 0, started = {}}
end

-- The starts `group` may still make in the pop at `now` (math.huge: no rate limit).
-- `custom`: whether the queue has group settings at all (a rate-limited group has some).
function Groups.rates.room(queue, group, now, custom)
  if not custom then return math.huge end
  local id = queue .. ' ' .. group
  local pace = Groups.rates.paced[id]
  if pace == nil then
    pace = Groups.rates.read_pace(queue, group, now)
    Groups.rates.paced[id] = pace
    if pace then Groups.rates.any = true end
  end
  if not pace then return math.huge end
  return math.max(0, pace.limit - pace.used - pace.taken)
end

-- The pop took `jid` from `group` in turn (it counts as a start once handed out).
function Groups.rates.took(queue, group, jid)
  if not Groups.rates.any then return end
  local pace = Groups.rates.paced[queue .. ' ' .. group]
  if not pace then return end
  pace.taken = pace.taken + 1
  Groups.rates.pending[jid] = pace
end

-- Seconds from `now` until a group whose pop used its room has a free start again (0: it
-- has one now, as when some of what the pop took did not start).
function Groups.rates.wait_of(pace, now)
  local rank = pace.used + #pace.started - pace.limit
  if rank < 0 then return 0 end
  local from = string.format('(%.6f', now - pace.period)
  local oldest = call('ZRANGEBYSCORE', pace.key, from, '+inf', 'WITHSCORES', 'LIMIT', rank, 1)
  if oldest[2] == nil then return 0 end
  return math.max(0, tonumber(oldest[2]) + pace.period - now)
end

-- The end of a pop at `now` (`popped`: every jid it handed out): the starts of the
-- rate-limited groups join their logs, and a group the limit held back tells the pop's
-- reply when it has a free start (RateLimit.hold).
function Groups.rates.record(popped, now)
  if not Groups.rates.any then return end
  local stamp = ' ' .. string.format('%.6f', now)
  for _, jid in ipairs(popped) do
    local pace = Groups.rates.pending[jid]
    if pace then pace.started[#pace.started + 1] = jid .. stamp end
  end
  for _, pace in pairs(Groups.rates.paced) do
    if pace then
      if #pace.started > 0 then zadd_batched(pace.key, now, pace.started) end
      if pace.used + pace.taken >= pace.limit then
        RateLimit.hold(Groups.rates.wait_of(pace, now))
      end
    end
  end
  Groups.rates.paced, Groups.rates.pending, Groups.rates.any = {}, {}, false
end

-- group.set's rate options, checked before it writes anything: the limit (0 lifts it) and
-- the period, or nil when neither is given.
function Groups.rates.option(o)
  if o.rate == nil then
    check(o.per == nil, 'Group(): Arg "per" given without "rate"')
    return nil
  end
  local limit = number(o.rate)
  check(limit and limit >= 0 and limit == math.floor(limit),
    'Group(): Arg "rate" not a whole number from 0: ' .. o.rate)
  local period = 1
  if o.per ~= nil then
    period = number(o.per)
    check(period and period > 0, 'Group(): Arg "per" not a number of seconds above 0: ' .. o.per)
  end
  return {limit = whole(limit), period = period}
end

-- Sets (or, limit 0, lifts) a group's rate limit; returns whether the group has one now.
-- A changed limit keeps the starts already counted.
function Groups.rates.set(queue, group, rate)
  local key = Groups.rates.key(queue)
  if rate == nil then return call('HEXISTS', key, group) == 1 end
  if rate.limit == 0 then
    call('HDEL', key, group)
    call('DEL', Groups.rates.starts_key(queue, group))
    return false
  end
  call('HSET', key, group, rate.limit .. ' ' .. rate.period)
  return true
end

-- The queue's rate-limited groups: group -> {limit, period, used (starts in the window
-- ending at `now`)}.
function Groups.rates.all(queue, now)
  local result = {}
  local stored = call('HGETALL', Groups.rates.key(queue))
  for i = 1, #stored, 2 do
    local limit, period = Groups.rates.parse(stored[i + 1])
    if limit ~= nil then
      local used = Groups.rates.used_at(Groups.rates.starts_key(queue, stored[i]), period, now)
      result[stored[i]] = {limit = limit, period = period, used = used}
    end
  end
  return result
end
