-- Put: a job made, or made again under its jid, in a queue (flows, batches, deduplicated
-- puts and requeue put through Job.put too).
--
-- A put's arguments come as one list, `a` (after now: worker, queue, jid, klass, data, delay,
-- then option pairs from position 7), the list queue.put is given and the one flows and
-- batches make for each of their jobs.
--
-- (Put's helpers are the locals of one block: only a chunk's top-level locals count
-- towards its limit of 200.)
do
  -- Validates put's arguments in the reference's order; returns them parsed: worker, queue,
  -- jid, klass, data, delay, retries, tags, priority, depends, throttles, rate_limits.
  local function parse(D, a)
    local queue, jid, klass, data, delay = a[2], a[3], a[4], a[5], a[6]
    check(queue and queue ~= '', 'Queue(): no queue name provided')
    check(jid, 'Put(): Arg "jid" missing')
    check(klass, 'Put(): Arg "klass" missing')
    local o = NOTHING
    if not Groups.only_option(a) then o = options(a, 7) end  -- (group: see Groups.put_option)
    -- a staged put's data is not an argument: aqless's client wrote it (JSON it made) beside
    -- the call, in Keys.staged(<staged>), and the script never reads it in (see Job.put)
    local staged = o.staged
    -- (the hot paths test before they raise: a message is text made, the data's size)
    if staged == nil and not plain_json(data) and decode(data) == false then
      raise('Put(): Arg "data" missing or not JSON: ' .. tostring(data))
    end
    local delay_n = number(delay)
    if not delay_n then raise('Put(): Arg "delay" not a number: ' .. tostring(delay)) end
    if a.n > 6 and (a.n - 6) % 2 == 1 then
      raise('Odd number of additional args: ' .. (a.n - 6) .. ' option arguments')
    end
    if o == NOTHING then  -- the usual put
      return a[1], queue, jid, klass, data, delay_n, nil, nil, nil, NOTHING, NOTHING, nil
    end
    if not D.throttle_options and o.throttles ~= nil then o.throttles = nil end
    -- checked in the reference's order; absent retries/tags/priority keep the job's own
    local retries = optional_number(o.retries, nil, 'Put(): Arg "retries" not a number: ')
    if retries ~= nil then retries = whole(retries) end  -- `remaining` is counted down
    local tags = optional_list(o.tags, nil, 'Put(): Arg "tags" not JSON')
    local priority = optional_number(o.priority, nil, 'Put(): Arg "priority" not a number')
    local depends = optional_list(o.depends, NOTHING, 'Put(): Arg "depends" not JSON: ')
    local throttles = optional_list(o.throttles, NOTHING,
      'Put(): Arg "throttles" not JSON array: ')
    local rate_limits = optional_list(o.rate_limits, nil,
      'Put(): Arg "rate_limits" not JSON array: ')
    -- values, not a table of them (a table made costs the server as much as a small command)
    return a[1], queue, jid, klass, data, delay_n, retries, tags, priority, depends, throttles,
      rate_limits, staged
  end

  -- Checks put's arguments as put does, writing nothing (flow.put checks each job so before
  -- it puts any).
  function Job.check_put(D, a)
    parse(D, a)
    Groups.put_option(a)
  end

  -- The stored text of a job's list of tags (a plain list of strings), as cjson writes it.
  local function tags_text(tags)
    if #tags == 0 then return '{}' end
    return cjson.encode(tags)
  end

  -- The stored text of a job's throttles: cjson's; kept for the usual list, the queue's
  -- throttle alone.
  local one_throttle_text = memo(function(tid) return cjson.encode({tid}) end)
  local function throttles_text(throttles)
    if #throttles == 1 then return one_throttle_text(throttles[1]) end
    return cjson.encode(throttles)
  end

  -- The fields put reads of the job its jid names, when `existing` (the EXISTS of the job and
  -- of the keys Job.put asks about) counts any: NOTHING for a new job (no table made), and
  -- `existing` less the job's own key.
  local function old_fields(jid, existing)
    if existing == 0 then return NOTHING, existing end
    local v = call('HMGET', Keys.job(jid), 'priority', 'tags', 'queue', 'state', 'failure',
      'retries', 'worker', 'held_in', 'throttles')
    if not (v[1] or v[2] or v[3] or v[4] or v[5] or v[6] or v[7] or v[8] or v[9]) then
      return NOTHING, existing
    end
    return {priority = v[1] or nil, tags = v[2] or nil, queue = v[3] or nil,
      state = v[4] or nil, failure = v[5] or nil, retries = v[6] or nil,
      worker = v[7] or nil, held_in = v[8] or nil, throttles = v[9] or nil}, existing - 1
  end

  -- Undoes what the job was before the put (`old`, its fields): its tags (then the new
  -- `tags` are on), the dependencies `depends` no longer names, its queue, its place in a
  -- throttle's line, its worker, the completed set, its failure group. Returns whether the
  -- put took the job from another worker (then put is published here, before lock_lost; else
  -- the caller publishes it last). `picked`: the put's history entry waits for the pickup's
  -- (Worker.hand_over).
  local function leave_old(D, now, jid, queue, worker, old, old_tags, tags, depends, picked)
    Tags.all_off(D, jid, old_tags)
    if #depends > 0 and old.state ~= nil then
      for _, dependency in ipairs(call('SMEMBERS', Keys.dependencies(jid))) do
        if not contains(depends, dependency) then
          call('SREM', Keys.dependents(dependency), jid)
          call('SREM', Keys.dependencies(jid), dependency)
        end
      end
    end
    -- The put event follows the push (if any) so that every listening worker hears of the push
    -- first (aqless._worker.pickup); the protocol's order of put, then lock_lost, comes first.
    local takes_lock = old.worker ~= nil and old.worker ~= '' and old.worker ~= worker
    if takes_lock then Events.put(jid, queue) end
    if not picked then History.put(D, jid, now, queue) end
    if old.queue ~= nil then Job.leave_queue(Job.home(old, jid), jid) end
    -- a parked job leaves its line too: the reference leaves it there (REQLESS 6.8), and a
    -- later release would add it to the work set wherever the put placed it
    if old.state == 'throttled' then Throttle.leave_lines(jid, old.throttles) end
    if old.worker ~= nil and old.worker ~= '' then
      call('ZREM', Keys.worker_jobs(old.worker), jid)
      if takes_lock then Events.lock_lost(jid, old.worker) end
    end
    if old.state == 'complete' then
      call('ZREM', Keys.completed(), jid)
      Results.clear(jid)
    end
    for _, tag in ipairs(tags) do Tags.on(jid, tag, now) end
    if old.state == 'failed' then Job.leave_failure_group(jid, old.failure, queue, now) end
    return takes_lock
  end

  -- Places the job (already written in `state`): among the queue's dependent jobs while it
  -- waits for any, else scheduled, else in a throttle's line, else in the work set (then
  -- true: a worker may take it).
  local function place(now, queue, jid, old, depends, delay, throttles, state, priority)
    local has_dependencies = (old.state ~= nil or #depends > 0)
      and call('SCARD', Keys.dependencies(jid)) > 0
    if has_dependencies then
      call('ZADD', Keys.queue(queue, 'depends'), now, jid)
      call('HSET', Keys.job(jid), 'state', 'depends')
      if delay > 0 then call('HSET', Keys.job(jid), 'scheduled', now + delay) end
    elseif delay > 0 then
      call('ZADD', Keys.queue(queue, 'scheduled'), now + delay, jid)
    elseif Throttle.first_unavailable(throttles) ~= nil then
      Throttle.park(queue, jid, throttles, state, now)
    else
      Job.to_work(queue, jid, priority, now)
      return true
    end
    return false
  end

  -- A staged put's data (option `staged`, the jid its client wrote it under), before put
  -- writes anything. A new job (`old` is NOTHING, and no hash of its jid) takes the staged
  -- hash as its own (RENAME: no byte of the data enters the script), then NOTHING; a job put
  -- again gets the staged text (HGET, the rare path). Refused when nothing was staged.
  local function staged_data(jid, staged, old, existing)
    local key = Keys.staged(staged)
    local data
    if old == NOTHING and (existing == 0 or call('EXISTS', Keys.job(jid)) == 0) then
      data = NOTHING
      local renamed = redis.pcall('RENAME', key, Keys.job(jid))
      if renamed.err then  -- nothing staged; any other refusal (an ACL's) as it is
        check(renamed.err:find('no such key', 1, true), renamed.err)
        data = false
      end
    else
      data = call('HGET', key, 'data')
    end
    check(data, 'Put(): Arg "staged" names no staged data: ' .. staged)
    return data
  end

  -- The last pair of a picked-up job's HSET: its first attempt (Worker.hand_over's, where
  -- the pop's HSET would add it); other puts end with Groups.field's (chosen, not wrapped in
  -- a function of both: every put would pay for the call).
  local function first_attempt() return 'attempt', 1 end

  -- The fields of a job put and picked up, by Job.at's positions, as stored now (the put
  -- having written the pop's state, worker, expires and attempt); a staged job's data (not
  -- an argument) read back.
  local function picked_fields(jid, klass, data, queue, priority, retries, tags, throttles,
      now, worker, expires)
    if data == NOTHING then data = call('HGET', Keys.job(jid), 'data') end
    local f, at = {}, Job.at
    f[at.time], f[at.jid], f[at.klass], f[at.state] = time_field(now), jid, klass, 'running'
    f[at.queue], f[at.priority], f[at.retries], f[at.remaining] = queue, priority, retries, retries
    f[at.data], f[at.tags], f[at.throttles] = data, tags_text(tags), throttles_text(throttles)
    f[at.attempt], f[at.worker], f[at.expires] = 1, worker, expires
    return f
  end

  -- Puts the job the put list `a` describes; returns its jid.
  function Job.put(D, now, a)
    local worker, queue, jid, klass, data, delay, given_retries, given_tags, given_priority,
      depends, given_throttles, rate_limits, staged = parse(D, a)
    local group = Groups.put_option(a)
    -- One EXISTS answers four questions put asks (and whether the queue is grouped, see
    -- groups.lua), when the answer is no as it mostly is:
    -- whether the job exists, whether anything is tracked, whether a worker offers to take
    -- the queue's jobs, whether the queue's throttle has a maximum (its hash). When the
    -- job's own fields account for all that exists, the other three are no as well;
    -- otherwise each is asked where it was.
    local stem = Keys.queue_throttle(queue)
    local old, existing = old_fields(jid, Groups.exists_with(queue, Keys.job(jid),
      Keys.tracked(), Keys.offers(queue), Keys.throttle(stem)))
    local no_offers = existing == 0
    if staged ~= nil then data = staged_data(jid, staged, old, existing) end
    if no_offers then
      Events.learn_tracked(false)
      Throttle.learn_unlimited(stem)
    end
    local priority = given_priority or tonumber(old.priority) or 0
    local retries = given_retries or tonumber(old.retries) or 5
    local old_tags = NOTHING
    if old.tags ~= nil then old_tags = Tags.parse(old.tags) end
    local tags = given_tags or old_tags
    -- the pickup (Worker.pickup): a new job, waiting at once, alone in a queue offered
    local taker, picked, tried = nil, false, false
    if existing == 1 and old == NOTHING and delay <= 0 and #depends == 0 and group == nil
      and rate_limits == nil and #given_throttles == 0 and not Groups.is_grouped(queue) then
      tried = true
      taker, picked = Worker.pickup(now, queue, stem, jid)
    end
    local takes_lock = leave_old(D, now, jid, queue, worker, old, old_tags, tags, depends,
      picked)

    local old_stem = nil
    if old.queue ~= nil then old_stem = Keys.queue_throttle(old.queue) end
    local throttles = Throttle.list_for(given_throttles, old_stem, queue)
    local state = 'waiting'
    if delay > 0 then state = 'scheduled' end
    Groups.leave_old(jid, group, old)
    local shown_state, shown_worker, expires = state, '', 0
    if picked then
      shown_state, shown_worker, expires = 'running', taker, now + Config.heartbeat(queue)
    end
    local data_field, given_data = 'data', data
    if data == NOTHING then  -- staged, a new job: its hash is the staged one, data in it
      data_field, data = 'jid', jid  -- (jid written twice, data left as it is)
    end
    call('HSET', Keys.job(jid), 'jid', jid, 'klass', klass, data_field, data,
      'priority', priority, 'tags', tags_text(tags), 'state', shown_state,
      'worker', shown_worker, 'expires', expires, 'queue', queue, 'retries', retries,
      'remaining', retries, 'time', time_field(now), 'throttles', throttles_text(throttles),
      (picked and first_attempt or Groups.field)(group))
    RateLimit.store(jid, rate_limits, old.state ~= nil)
    Groups.on_put(queue, jid, group)
    Job.settle_home(jid, old)
    -- put again: a new job, which starts from no checkpoint (checkpoint.lua)
    if old ~= NOTHING then call('HDEL', Keys.job(jid), 'checkpoint') end
    Job.add_dependencies(jid, depends)

    local waiting = picked or place(now, queue, jid, old, depends, delay, throttles, state,
      priority)
    Job.register_queue(queue, now)
    if picked then
      Worker.hand_over(now, queue, taker, picked_fields(jid, klass, given_data, queue, priority,
        retries, tags, throttles, now, taker, expires), throttles, History.put_text(D, now, queue))
    elseif waiting and not no_offers and (taker or not tried) then
      Worker.push(now, queue, existing == 1, taker)
    end
    if not takes_lock then Events.put(jid, queue) end
    Events.if_tracked('put', jid)
    return jid
  end
end
