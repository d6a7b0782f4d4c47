-- Fair groups inside a queue (aqless's own). A job put with a group (a tenant, a customer)
-- is an ordinary job of its queue: it waits in the queue's work set, where any qless
-- client's pop takes it by priority. Beside that, a grouped queue keeps an index that
-- aqless's pop takes from, group by group:
--   ql:q:<q>-groups              hash: `clock` (the virtual time of the last turn),
--                                `weight:<g>`, `concurrency:<g>` (the groups' settings);
--                                its existence makes the queue grouped
--   ql:q:<q>-groups-ready        zset: the groups with waiting jobs, scored by their pass
--   ql:q:<q>-group-work:<g>      zset: a group's waiting jids, scored as in the work set
--   ql:q:<q>-group-running:<g>   zset: the jids aqless's pop handed out of a group with a
--                                concurrency cap (pruned of those no longer running)
-- Jobs without a group form the default group, named '' here.
--
-- The index may hold jids that left the work set another way (a cancel, a foreign pop, a
-- completion): the pop checks every jid against the work set before it takes it and drops
-- the others. Every way into the work set goes through Groups.enter.
--
-- Turns: stride scheduling. The ready group of least pass gets the next job, then its pass
-- grows by 1/weight; a group that joins (or comes back) starts at the clock, so it gets no
-- more than its share either.

local Groups = {
  active = {},  -- queue -> whether it is grouped, learnt during a call
  hints = {},   -- jid -> the group its put gave (spares a read of the job)
  WINDOW = 16,  -- ready groups read beyond the count a pop asks for
}

function Groups.forget()
  Groups.active, Groups.hints = {}, {}
end

function Groups.settings_key(queue) return Keys.queue(queue, 'groups') end
function Groups.ready_key(queue) return Keys.queue(queue, 'groups-ready') end
function Groups.work_key(queue, group) return Keys.queue(queue, 'group-work:' .. group) end
function Groups.running_key(queue, group)
  return Keys.queue(queue, 'group-running:' .. group)
end

-- The caller knows the queue is not grouped (an EXISTS that included its settings key).
function Groups.learn_none(queue) Groups.active[queue] = false end

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
  if call('HSETNX', Groups.settings_key(queue), 'clock', 0) == 1 then
    local default = Groups.work_key(queue, '')
    if call('ZUNIONSTORE', default, 1, Keys.queue(queue, 'work')) > 0 then
      call('ZADD', Groups.ready_key(queue), 0, '')
    end
  end
  Groups.active[queue] = true
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

-- A put gave the job a group: stored on the job, and its queue becomes grouped. A job
-- that had another group leaves that group's index in the queue it was in (`old`: its
-- fields before the put).
function Groups.on_put(queue, jid, group, old)
  if group == nil then return end
  if old.queue ~= nil then
    local before = call('HGET', Keys.job(jid), 'group')
    if before and before ~= group then
      call('ZREM', Groups.work_key(old.queue, before), jid)
    end
  end
  call('HSET', Keys.job(jid), 'group', group)
  Groups.enable(queue)
  Groups.hints[jid] = group
end

-- A job enters its queue's work set with `score`: in a grouped queue it joins its group's
-- index too (a re-score updates it).
function Groups.enter(queue, jid, score)
  if not Groups.is_grouped(queue) then return end
  local group = Groups.hints[jid]
  if group == nil then group = call('HGET', Keys.job(jid), 'group') or '' end
  call('ZADD', Groups.work_key(queue, group), score, jid)
  call('ZADD', Groups.ready_key(queue), 'NX', 0, group)
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

-- The next jid of group `g` (Groups.take's record) that still waits in the work set and
-- is not `chosen` already (a jid left in another group's index), or nil when the group has
-- none or no room under its cap; reads `want` at a time.
function Groups.next_of(queue, g, work, want, chosen)
  if g.room == nil then
    g.room = math.huge
    if g.cap ~= nil then g.room = g.cap - Groups.running(queue, g.name) end
  end
  if #g.took >= g.room then return nil end
  while true do
    if g.next > #g.jids then
      if g.exhausted then return nil end
      local page = call('ZREVRANGE', Groups.work_key(queue, g.name), g.read,
        g.read + want - 1)
      g.read = g.read + #page
      g.exhausted = #page < want
      g.jids, g.next = page, 1
      if #page == 0 then return nil end
    end
    local jid = g.jids[g.next]
    g.next = g.next + 1
    g.seen[#g.seen + 1] = jid
    if not chosen[jid] and call('ZSCORE', work, jid) then return jid end
  end
end

-- Up to `n` jids of a grouped queue, group by group in turn (a group's own by priority),
-- each taken out of its group's index and still in the work set (the pop takes it from
-- there). Groups at their concurrency cap are passed over.
function Groups.take(queue, n)
  local taken = {}
  if n <= 0 then return taken end
  local ready = Groups.ready_key(queue)
  local window = call('ZRANGE', ready, 0, n + Groups.WINDOW - 1, 'WITHSCORES')
  if #window == 0 then return taken end
  local fields = {'clock'}
  for i = 1, #window, 2 do
    fields[#fields + 1] = 'weight:' .. window[i]
    fields[#fields + 1] = 'concurrency:' .. window[i]
  end
  local settings = call('HMGET', Groups.settings_key(queue), unpack(fields))
  local clock = tonumber(settings[1]) or 0
  local groups = {}
  for i = 1, #window, 2 do
    local k = (i + 1) / 2
    groups[k] = {name = window[i], pass = math.max(tonumber(window[i + 1]), clock),
      weight = tonumber(settings[2 * k]) or 1, cap = tonumber(settings[2 * k + 1]),
      jids = NOTHING, next = 1, read = 0, took = {}, seen = {}, done = false}
  end
  local work = Keys.queue(queue, 'work')
  local chosen = {}
  while #taken < n do
    local best = nil
    for _, g in ipairs(groups) do
      if not g.done and (best == nil or g.pass < best.pass) then best = g end
    end
    if best == nil then break end
    local jid = Groups.next_of(queue, best, work, n - #taken, chosen)
    if jid == nil then
      best.done = true
    else
      taken[#taken + 1] = jid
      chosen[jid] = true
      best.took[#best.took + 1] = jid
      clock = best.pass
      best.pass = best.pass + 1 / best.weight
    end
  end
  local passes = {}
  for _, g in ipairs(groups) do
    if #g.seen > 0 then call_batched('ZREM', Groups.work_key(queue, g.name), g.seen) end
    if g.exhausted and g.next > #g.jids then
      call('ZREM', ready, g.name)
    elseif #g.took > 0 then
      passes[#passes + 1] = g.pass
      passes[#passes + 1] = g.name
    end
    if g.cap ~= nil and #g.took > 0 then
      zadd_batched(Groups.running_key(queue, g.name), 0, g.took)
    end
  end
  if #passes > 0 then call('ZADD', ready, 'XX', unpack(passes)) end
  call('HSET', Groups.settings_key(queue), 'clock', clock)
  return taken
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

--[=[ group.counts
  Args     queue
  Reads    ql:q:<q>-groups, ql:q:<q>-groups-ready, ql:q:<q>-group-work:<g>, ql:q:<q>-work,
           ql:q:<q>-locks, ql:j:<jid>
  Writes   ql:q:<q>-group-work:<g> (pruned of jids no longer waiting)
  Returns  JSON list of the queue's groups in name order ([] for a queue without groups):
           {"group": name ('' for jobs put without one), "waiting": n, "running": n,
           "weight": w, "concurrency": cap (0: none)}
  Errors   'Queue(): no queue name provided'   InvalidArgumentError
]=]
function Groups.counts(queue)
  check(queue, 'Queue(): no queue name provided')
  local result = {}
  if call('EXISTS', Groups.settings_key(queue)) == 0 then return result end
  local names = {}
  for _, name in ipairs(call('ZRANGE', Groups.ready_key(queue), 0, -1)) do
    names[name] = true
  end
  local settings = call('HGETALL', Groups.settings_key(queue))
  local weights, caps = {}, {}
  for i = 1, #settings, 2 do
    local key, value = settings[i], settings[i + 1]
    local name = string.match(key, '^weight:(.*)$')
    if name ~= nil then weights[name], names[name] = tonumber(value), true end
    name = string.match(key, '^concurrency:(.*)$')
    if name ~= nil then caps[name], names[name] = tonumber(value), true end
  end
  local running = Groups.running_by_group(queue)
  for name in pairs(running) do names[name] = true end
  local work = Keys.queue(queue, 'work')
  local sorted = {}
  for name in pairs(names) do sorted[#sorted + 1] = name end
  table.sort(sorted)
  for _, name in ipairs(sorted) do
    local index = Groups.work_key(queue, name)
    local waiting = call('ZINTERSTORE', index, 2, index, work, 'WEIGHTS', 1, 0)
    result[#result + 1] = {group = name, waiting = waiting, running = running[name] or 0,
      weight = weights[name] or 1, concurrency = caps[name] or 0}
  end
  return result
end

--[=[ group.set
  Args     queue, group ('' for the jobs put without one), [name, value]... (options:
           weight, a positive number, the group's share of turns (1 by default);
           concurrency, a whole number from 0, the most of its jobs aqless's pop lets run
           at once (0: no cap))
  Reads    ql:q:<q>-groups, ql:q:<q>-work, ql:q:<q>-locks, ql:j:<jid>
  Writes   ql:q:<q>-groups, ql:q:<q>-groups-ready, ql:q:<q>-group-work:,
           ql:q:<q>-group-running:<g>
  Returns  nil
  Errors   'Queue(): no queue name provided'   InvalidArgumentError
           'Group(): Arg "group" missing'   InvalidArgumentError
           'Group(): Arg "weight" not a positive number: <weight>'   InvalidArgumentError
           'Group(): Arg "concurrency" not a whole number from 0: <concurrency>'
             InvalidArgumentError
]=]
function Groups.set(queue, group, a)
  check(queue, 'Queue(): no queue name provided')
  check(group, 'Group(): Arg "group" missing')
  local o = options(a, 3)
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
  Groups.enable(queue)
  local key = Groups.settings_key(queue)
  if weight ~= nil then call('HSET', key, 'weight:' .. group, weight) end
  if cap == 0 then
    call('HDEL', key, 'concurrency:' .. group)
    call('DEL', Groups.running_key(queue, group))
  elseif cap ~= nil then
    call('HSET', key, 'concurrency:' .. group, cap)
    -- the group's jobs already running count against the cap
    local running = Groups.running_key(queue, group)
    for _, jid in ipairs(call('ZRANGE', Keys.queue(queue, 'locks'), 0, -1)) do
      if (call('HGET', Keys.job(jid), 'group') or '') == group then
        call('ZADD', running, 0, jid)
      end
    end
  end
end
