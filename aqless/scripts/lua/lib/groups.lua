-- Fair groups inside a queue (aqless's own). A job put with a group (a tenant, a customer)
-- is an ordinary job of its queue: it waits in the queue's work set, where any qless
-- client's pop takes it by priority. Beside that, a grouped queue keeps an index that
-- aqless's pop takes from, group by group:
--   ql:q:<q>-groups              hash: `grouped`; its existence makes the queue grouped
--   ql:q:<q>-group-settings      hash: <g> -> '<weight> <concurrency cap, 0: none>', for
--                                the groups whose settings are not the default ('1 0')
--   ql:q:<q>-groups-ready        zset: the groups with waiting jobs, scored by their pass
--                                (-1: a group that joined since its last turn)
--   ql:q:<q>-group-work:<g>      zset: a group's waiting jids, scored as in the work set
--   ql:q:<q>-group-running:<g>   zset: the jids aqless's pop handed out of a group with a
--                                concurrency cap (pruned of those no longer running)
--   ql:q:<q>-group-rates, ql:q:<q>-group-starts:<g>: rate limits (grouprates.lua)
-- Jobs without a group form the default group, named '' here.
--
-- The index may hold jids that left the work set another way (a cancel, a foreign pop, a
-- completion): the pop checks every jid against the work set before it takes it and drops
-- the others. Every way into the work set goes through Groups.enter.
--
-- Turns: stride scheduling. The ready group of least pass gets the next job, then its pass
-- grows by 1/weight; a group that joins (or comes back) starts at the least pass of the
-- others, so it gets no more than its share either.

local Groups = {
  active = {},  -- queue -> whether it is grouped, learnt during a call
  custom = {},  -- queue -> whether any of its groups has settings, learnt by a pop
  hint_jid = nil,  -- the job of the latest put with a group, and that group (spares
  hint_group = nil,  -- Groups.enter a read of the job)
  rates = {},  -- the groups' rate limits (grouprates.lua)
}

function Groups.forget()
  Groups.active, Groups.custom, Groups.hint_jid = {}, {}, nil
end

function Groups.settings_key(queue) return Keys.queue(queue, 'groups') end
function Groups.custom_key(queue) return Keys.queue(queue, 'group-settings') end
function Groups.ready_key(queue) return Keys.queue(queue, 'groups-ready') end
function Groups.work_key(queue, group) return Keys.queue(queue, 'group-work:' .. group) end
function Groups.running_key(queue, group)
  return Keys.queue(queue, 'group-running:' .. group)
end

-- How many of the keys (at most four) exist, asked together with whether the queue is
-- grouped, which is learnt: one EXISTS, the queue's settings key counted five times over
-- (more than the others can add up to). (put's question whether anything unusual exists:
-- mostly nothing does.)
function Groups.exists_with(queue, ...)
  local key = Groups.settings_key(queue)
  local found = call('EXISTS', key, key, key, key, key, ...)
  local grouped = found >= 5
  Groups.active[queue] = grouped
  if grouped then return found - 5 end
  return found
end

-- pop's question (Groups.exists_with's), which also learns whether any group has settings
-- of its own: their hash counted eight times over.
function Groups.exists_for_pop(queue, a, b, c)
  local key, custom = Groups.settings_key(queue), Groups.custom_key(queue)
  local found = call('EXISTS', key, key, key, key, custom, custom, custom, custom, custom,
    custom, custom, custom, a, b, c)
  Groups.custom[queue] = found >= 8
  if found >= 8 then found = found - 8 end
  Groups.active[queue] = found >= 4
  if found >= 4 then return found - 4 end
  return found
end

function Groups.is_grouped(queue)
  local known = Groups.active[queue]
  if known == nil then
    known = call('EXISTS', Groups.settings_key(queue)) == 1
    Groups.active[queue] = known
  end
  return known
end

-- Makes a queue grouped: the jobs waiting in it so far join the default group.
function Groups.enable(queue)
  if Groups.active[queue] == true then return end
  if call('HSETNX', Groups.settings_key(queue), 'grouped', 1) == 1 then
    local default = Groups.work_key(queue, '')
    if call('ZUNIONSTORE', default, 1, Keys.queue(queue, 'work')) > 0 then
      call('ZADD', Groups.ready_key(queue), -1, '')
    end
  end
  Groups.active[queue] = true
end

-- Whether put's only option is `group` (then put parses none of the others).
function Groups.only_option(a)
  return a.n == 8 and a[7] == 'group'
end

-- put's `group` option, checked (before put writes anything): nil when not given.
function Groups.put_option(a)
  if a.n <= 6 then return nil end
  local group = nil
  for i = 7, a.n, 2 do
    if a[i] == 'group' then group = a[i + 1] end
  end
  if group ~= nil then check(group ~= '', 'Put(): Arg "group" empty') end
  return group
end

-- Before put writes the job: a job given another group than it had leaves that group's
-- index in the queue it was in (`old`: its fields before the put).
function Groups.leave_old(jid, group, old)
  if group == nil or old.queue == nil then return end
  local before = call('HGET', Keys.job(jid), 'group')
  if before and before ~= group then
    call('ZREM', Groups.work_key(old.queue, before), jid)
  end
end

-- The job hash's field of a put's group (put writes it with the others): none without one.
function Groups.field(group)
  if group == nil then return end
  return 'group', group
end

-- A put gave the job a group (written with its fields): its queue becomes grouped.
function Groups.on_put(queue, jid, group)
  if group == nil then return end
  if Groups.active[queue] ~= true then Groups.enable(queue) end
  Groups.hint_jid, Groups.hint_group = jid, group
end

-- A job enters its queue's work set with `score`: in a grouped queue it joins its group's
-- index too (a re-score updates it).
function Groups.enter(queue, jid, score)
  if not Groups.is_grouped(queue) then return end
  local group
  if jid == Groups.hint_jid then
    group = Groups.hint_group
  else
    group = call('HGET', Keys.job(jid), 'group') or ''
  end
  call('ZADD', Groups.work_key(queue, group), score, jid)
  call('ZADD', Groups.ready_key(queue), 'NX', -1, group)
end

-- How many of a group's jobs run, counting those aqless's pop handed out (the running set,
-- pruned here of the jobs whose lock is gone).
function Groups.running(queue, group)
  local key = Groups.running_key(queue, group)
  local members = call('ZRANGE', key, 0, -1)
  local locks = Keys.queue(queue, 'locks')
  local gone = {}
  for _, jid in ipairs(members) do
    if not call('ZSCORE', locks, jid) then gone[#gone + 1] = jid end
  end
  if #gone > 0 then call_batched('ZREM', key, gone) end
  return #members - #gone
end

-- Groups.take's window, `w`: the ready groups of least pass, read a page at a time. Group
-- k's name and pass are w.groups[2k - 1] and w.groups[2k] (the first page's own table,
-- its scores made passes: a group that joined since its last turn starts at the least pass
-- of the others, `w.least`); where the queue has group settings, its weight and cap
-- (false: none) are w.weights[k] and w.caps[k] (else 1 and none); w.done[k] once it has
-- nothing more to give, w.records[k] once it had a turn. (Few tables, filled by position:
-- what a pop of one job makes costs the server about as much as a command.)

-- Reads the next `size` ready groups into the window; returns how many it read.
function Groups.read_window(w, size)
  local page = call('ZRANGE', w.ready, w.read, w.read + size - 1, 'WITHSCORES')
  local count = #page / 2
  w.read, w.full = w.read + count, count == size
  if count == 0 then return 0 end
  local settings = nil
  if w.custom then
    local names = {}
    for i = 1, count do names[i] = page[2 * i - 1] end
    settings = call('HMGET', w.settings, unpack(names))
  end
  if w.least == nil then Groups.find_least(w, page) end
  local groups = w.groups or page
  w.groups = groups
  local from = w.count
  for i = 1, count do
    local pass = tonumber(page[2 * i])
    if pass < 0 then pass = w.least end
    groups[2 * (from + i) - 1], groups[2 * (from + i)] = page[2 * i - 1], pass
    if settings then
      local weight, cap = Groups.parse_settings(settings[i])
      w.weights[from + i], w.caps[from + i] = weight, cap or false
    end
  end
  w.count = from + count
  return count
end

-- The least pass of the groups that had turns (0 when none has): in the window's first
-- page (ZRANGE's order), else the first of them in the ready set.
function Groups.find_least(w, page)
  for i = 2, #page, 2 do
    local pass = tonumber(page[i])
    if pass >= 0 then
      w.least = pass
      return
    end
  end
  w.least = 0
  if w.full then
    local first = call('ZRANGEBYSCORE', w.ready, 0, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
    if #first > 0 then w.least = tonumber(first[2]) end
  end
end

-- A group's weight and cap (nil: none) from its stored settings ('<weight> <cap>').
function Groups.parse_settings(text)
  if not text then return 1, nil end
  local weight, cap = string.match(text, '^(%S+) (%S+)$')
  cap = tonumber(cap)
  if cap == 0 then cap = nil end
  return tonumber(weight) or 1, cap
end

-- The next jid of the window's group `k` that still waits in the work set and is not
-- `chosen` already (a jid left in another group's index), with its fields as the pop reads
-- them (Job.read_for_pop), or nil when the group has none or no room under its cap or rate
-- limit; reads `want` at a time. Its record (made on its first turn) keeps what it read
-- and took. A page of one read first is taken out of the index at once (ZPOPMAX: the
-- jid ZREVRANGE reads first); write_back takes out the jids the other pages gave.
function Groups.next_of(queue, w, k, work, want, chosen)
  local records = w.records
  local r = records and records[k]
  if not r then
    local name, cap, room = w.groups[2 * k - 1], w.caps and w.caps[k], math.huge
    if cap then room = cap - Groups.running(queue, name) end
    room = math.min(room, Groups.rates.room(queue, name, w.now, w.custom))
    r = {key = Groups.work_key(queue, name), jids = NOTHING, popped = false, next = 1,
      read = 0, exhausted = false, took = 0, room = room, mine = nil}
    if not records then
      records = {}
      w.records = records
    end
    records[k] = r
  end
  if r.took >= r.room then return nil end
  while true do
    if r.next > #r.jids then
      if r.exhausted then return nil end
      local page
      r.popped = want == 1 and r.read == 0
      if r.popped then
        page = call('ZPOPMAX', r.key)
        page[2] = nil
      else
        page = call('ZREVRANGE', r.key, r.read, r.read + want - 1)
        r.read = r.read + #page
      end
      r.exhausted = #page < want
      r.jids, r.next = page, 1
      if #page == 0 then return nil end
    end
    local jid = r.jids[r.next]
    r.next = r.next + 1
    local job = nil
    if not (chosen and chosen[jid]) then job = Groups.waiting(queue, work, jid) end
    if job then
      r.took = r.took + 1
      if w.caps and w.caps[k] then
        r.mine = r.mine or {}
        r.mine[#r.mine + 1] = jid
      end
      return jid, job
    end
  end
end

-- A jid's fields (Job.read_for_pop) when it still waits in the queue's work set, else nil.
-- The fields answer for a job waiting in this queue by its `queue` field; any other is
-- looked up in the work set (a job timed out waits there `stalled`).
function Groups.waiting(queue, work, jid)
  local job = Job.read_for_pop(jid)
  local at = Job.at
  if job[at.state] == 'waiting' and job[at.queue] == queue and not job[at.held_in] then
    return job
  end
  if call('ZSCORE', work, jid) then return job end
  return nil
end

-- Writes back what Groups.take did to the window's groups: the jids read leave their
-- indexes (those ZREVRANGE read and the pop went through: the first of the index, which
-- nothing changed since), emptied groups leave the ready set, the others keep their new
-- pass, capped groups' jobs join their running sets.
function Groups.write_back(queue, w)
  local records, groups, passes = w.records, w.groups, nil
  if records == nil then return end
  for k = 1, w.count do
    local r = records[k]
    if r then
      local unread = #r.jids - r.next + 1  -- of the last page (one ZPOPMAX took is read)
      local seen = r.read - unread
      if seen > 0 then call('ZREMRANGEBYRANK', r.key, -seen, -1) end
      if r.exhausted and unread == 0 then
        call('ZREM', w.ready, groups[2 * k - 1])
      elseif r.took > 0 then
        passes = passes or {}
        passes[#passes + 1] = groups[2 * k]
        passes[#passes + 1] = groups[2 * k - 1]
      end
      if r.mine ~= nil then
        zadd_batched(Groups.running_key(queue, groups[2 * k - 1]), 0, r.mine)
      end
    end
  end
  if passes then call('ZADD', w.ready, 'XX', unpack(passes)) end
end

-- Up to `n` jids of a grouped queue, group by group in turn (a group's own by priority),
-- each taken out of its group's index and still in the work set (the pop takes it from
-- there), and their fields (Job.read_for_pop's, read to check them) in the same order.
-- Groups at their concurrency cap or rate limit (at `now`) are passed over. Only the
-- groups of least pass are read, a few more than the count, then more while those have
-- nothing to give.
function Groups.take(queue, n, now)
  local taken, fields = {}, {}
  if n <= 0 then return taken, fields end
  local custom = Groups.custom[queue]
  if custom == nil then custom = call('EXISTS', Groups.custom_key(queue)) == 1 end
  if n == 1 and not custom then return Groups.take_one(queue) end
  local w = {ready = Groups.ready_key(queue), custom = custom, read = 0, full = false,
    count = 0, now = now}
  if custom then
    w.settings, w.weights, w.caps = Groups.custom_key(queue), {}, {}
  end
  if Groups.read_window(w, n + 2) == 0 then return taken, fields end
  local work = Keys.queue(queue, 'work')
  local groups, chosen = w.groups, nil  -- (chosen: the jids taken, once one more is wanted)
  while #taken < n do
    local best, least, done = nil, nil, w.done
    for k = 1, w.count do
      if not (done and done[k]) and (best == nil or groups[2 * k] < least) then
        best, least = k, groups[2 * k]
      end
    end
    if best == nil then
      if not w.full or Groups.read_window(w, n - #taken + 2) == 0 then break end
    else
      -- a page of about the group's share of what is left, read again when it runs out
      local want = math.min(n - #taken, math.ceil((n - #taken) / w.count) + 1)
      local jid, job = Groups.next_of(queue, w, best, work, want, chosen)
      if jid == nil then
        w.done = done or {}
        w.done[best] = true
      else
        taken[#taken + 1] = jid
        fields[#taken] = job
        if #taken < n then
          chosen = chosen or {}
          chosen[jid] = true
        end
        Groups.rates.took(queue, groups[2 * best - 1], jid)
        groups[2 * best] = least + 1 / (w.weights and w.weights[best] or 1)
      end
    end
  end
  Groups.write_back(queue, w)
  return taken, fields
end

-- Groups.take of one job where no group has settings (each of weight 1, without cap or
-- rate limit): the same turn, the same commands, in fewer steps (a pop of one is the most
-- frequent). As a take starts, the ready set's order is that of the groups' passes (a
-- group that joined, -1, takes the least pass, which is the first of the others'), so the
-- turn is the first group in that order that still has a waiting job, read as Groups.take
-- reads them (pages of three, a first page of one from each group's index).
function Groups.take_one(queue)
  local ready, work = Groups.ready_key(queue), Keys.queue(queue, 'work')
  local w = {ready = ready, read = 0, full = false}  -- (for Groups.find_least)
  local emptied = nil
  while true do
    local page = call('ZRANGE', ready, w.read, w.read + 2, 'WITHSCORES')
    local count = #page / 2
    w.read, w.full = w.read + count, count == 3
    if count == 0 then break end
    if w.least == nil then Groups.find_least(w, page) end
    for i = 1, count do
      local name = page[2 * i - 1]
      local key = Groups.work_key(queue, name)
      while true do
        local jid = call('ZPOPMAX', key)[1]
        if jid == nil then break end
        local job = Groups.waiting(queue, work, jid)
        if job then
          Groups.rates.took(queue, name, jid)
          for _, group in ipairs(emptied or NOTHING) do call('ZREM', ready, group) end
          local pass = tonumber(page[2 * i])
          if pass < 0 then pass = w.least end
          call('ZADD', ready, 'XX', pass + 1, name)
          return {jid}, {job}
        end
      end
      emptied = emptied or {}
      emptied[#emptied + 1] = name
    end
    if not w.full then break end
  end
  for _, group in ipairs(emptied or NOTHING) do call('ZREM', ready, group) end
  return {}, {}
end

-- The group of each running job of a queue (its locks), counted: group -> count.
function Groups.running_by_group(queue)
  local counts = {}
  for _, jid in ipairs(call('ZRANGE', Keys.queue(queue, 'locks'), 0, -1)) do
    local group = call('HGET', Keys.job(jid), 'group') or ''
    counts[group] = (counts[group] or 0) + 1
  end
  return counts
end

function Groups.counts(queue, now)
  check(queue, 'Queue(): no queue name provided')
  local result = {}
  if call('EXISTS', Groups.settings_key(queue)) == 0 then return result end
  local names = {}
  for _, name in ipairs(call('ZRANGE', Groups.ready_key(queue), 0, -1)) do
    names[name] = true
  end
  local settings = call('HGETALL', Groups.custom_key(queue))
  local weights, caps = {}, {}
  for i = 1, #settings, 2 do
    local name = settings[i]
    weights[name], caps[name] = Groups.parse_settings(settings[i + 1])
    if weights[name] ~= 1 or caps[name] ~= nil then names[name] = true end
  end
  local rates = Groups.rates.all(queue, now)
  for name in pairs(rates) do names[name] = true end
  local running = Groups.running_by_group(queue)
  for name in pairs(running) do names[name] = true end
  local work = Keys.queue(queue, 'work')
  local sorted = {}
  for name in pairs(names) do sorted[#sorted + 1] = name end
  table.sort(sorted)
  for _, name in ipairs(sorted) do
    local index = Groups.work_key(queue, name)
    local waiting = call('ZINTERSTORE', index, 2, index, work, 'WEIGHTS', 1, 0)
    local rate = rates[name] or {limit = 0, period = 0, used = 0}
    result[#result + 1] = {group = name, waiting = waiting, running = running[name] or 0,
      weight = weights[name] or 1, concurrency = caps[name] or 0,
      rate = rate.limit, per = rate.period, used = rate.used}
  end
  return result
end

function Groups.set(queue, group, a, first)
  check(queue, 'Queue(): no queue name provided')
  check(group, 'Group(): Arg "group" missing')
  local o = options(a, first)
  local weight, cap = nil, nil
  if o.weight ~= nil then
    weight = number(o.weight)
    check(weight and weight > 0, 'Group(): Arg "weight" not a positive number: ' .. o.weight)
  end
  if o.concurrency ~= nil then
    cap = number(o.concurrency)
    check(cap and cap >= 0 and cap == math.floor(cap),
      'Group(): Arg "concurrency" not a whole number from 0: ' .. o.concurrency)
  end
  local rate = Groups.rates.option(o)
  Groups.enable(queue)
  local key = Groups.custom_key(queue)
  local old_weight, old_cap = Groups.parse_settings(call('HGET', key, group))
  weight, cap = weight or old_weight, cap or old_cap or 0
  local paced = Groups.rates.set(queue, group, rate)
  if weight == 1 and cap == 0 and not paced then
    call('HDEL', key, group)
  else
    call('HSET', key, group, weight .. ' ' .. cap)
  end
  if cap == 0 then
    call('DEL', Groups.running_key(queue, group))
  elseif cap ~= old_cap then
    -- the group's jobs already running count against the cap
    local running = Groups.running_key(queue, group)
    for _, jid in ipairs(call('ZRANGE', Keys.queue(queue, 'locks'), 0, -1)) do
      if (call('HGET', Keys.job(jid), 'group') or '') == group then
        call('ZADD', running, 0, jid)
      end
    end
  end
end
