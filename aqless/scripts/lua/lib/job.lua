-- Jobs: the job object, where a job is held, and the edits of a single job that are not
-- steps of its way through a queue (dependencies, priority, tags, tracking, log, cancel).

-- A job hash's fields by name (absent fields are nil).
function Job.read(jid, names)
  return read_hash(Keys.job(jid), names)
end

-- Every field of the job object, and `time` and `held_in` (what a pop needs): the HMGET
-- reply itself, by position, false where a field is absent. (Made into a table by name, the
-- 17 fields would cost the server a third as much again as the read.) `Job.at`: each
-- field's position in the reply (tests/scripts/test_lua_shape.py holds it to the HMGET).
-- (`attempt` and `checkpoint`, aqless's own fields, are not part of the job object: only
-- aqless's own pops and pushes present them.)
Job.at = {time = 1, held_in = 2, jid = 3, klass = 4, state = 5, queue = 6, priority = 7,
  retries = 8, remaining = 9, data = 10, tags = 11, failure = 12, spawned_from_jid = 13,
  throttles = 14, rate_limits = 15, attempt = 16, checkpoint = 17, worker = 18, expires = 19}
function Job.read_full(jid)
  return call('HMGET', Keys.job(jid), 'time', 'held_in', 'jid', 'klass', 'state', 'queue',
    'priority', 'retries', 'remaining', 'data', 'tags', 'failure', 'spawned_from_jid',
    'throttles', 'rate_limits', 'attempt', 'checkpoint', 'worker', 'expires')
end

-- The same but `worker` and `expires`, which a pop writes before it presents the job (each
-- field read costs the server about as much as a small table). `Job.pop_data`: the field
-- read in data's place: `data`, or, while a pop with data_beside runs (Job.beside_pop), a
-- field no job has, so that no job's data is made a Lua string: made one and copied into
-- the reply, 100 KB of data costs the server ~545k instructions more than 100 B (Valkey 9's
-- Lua hashes the whole string); the worker's plain HMGET of it, ~110k.
Job.pop_data = 'data'
function Job.read_for_pop(jid)
  return call('HMGET', Keys.job(jid), 'time', 'held_in', 'jid', 'klass', 'state', 'queue',
    'priority', 'retries', 'remaining', Job.pop_data, 'tags', 'failure', 'spawned_from_jid',
    'throttles', 'rate_limits', 'attempt', 'checkpoint')
end

-- `pop` run with the pops' reads leaving the jobs' data out (Job.pop_data), put back
-- however `pop` ends (a function library keeps Job between calls).
function Job.beside_pop(pop, ...)
  Job.pop_data = 'data (beside)'
  local ok, reply = pcall(pop, ...)
  Job.pop_data = 'data'
  if not ok then error(reply, 0) end
  return reply
end

-- The job object. (Its fields' positions as upvalues: read from Job.at per use, a pop of
-- many jobs would cost the server noticeably more. A block's locals do not count towards
-- the chunk's limit of 200.)
do
  local at = Job.at
  local JID, KLASS, STATE, QUEUE, WORKER = at.jid, at.klass, at.state, at.queue, at.worker
  local PRIORITY, EXPIRES, RETRIES, REMAINING = at.priority, at.expires, at.retries, at.remaining
  local DATA, TAGS, FAILURE, THROTTLES = at.data, at.tags, at.failure, at.throttles
  local SPAWNED_FROM_JID, ATTEMPT, CHECKPOINT = at.spawned_from_jid, at.attempt, at.checkpoint

  -- The JSON lists (cjson's: an empty one is {}) of the jids of the jobs that depend on a job
  -- and of those it depends on. Most jobs have neither, so one EXISTS of both sets comes
  -- first; its count spares the second read when only the dependents exist.
  local function relations_json(jid)
    local dependents, dependencies = Keys.dependents(jid), Keys.dependencies(jid)
    local existing = call('EXISTS', dependents, dependencies)
    if existing == 0 then return '{}', '{}' end
    local first = call('SMEMBERS', dependents)
    if existing == 1 and #first > 0 then return cjson.encode(first), '{}' end
    return cjson.encode(first), cjson.encode(call('SMEMBERS', dependencies))
  end

  -- The pairs only the objects of aqless's own replies carry ('' for the others): the job's
  -- `attempt`, and its `checkpoint` (checkpoint.lua) when it holds one: the JSON text as
  -- stored, which was JSON when it was written.
  local function own_pairs(own, attempt, checkpoint)
    if not own then return '' end
    if checkpoint then
      return ',"attempt":' .. whole_text(attempt or 0) .. ',"checkpoint":' .. checkpoint
    end
    return ',"attempt":' .. whole_text(attempt or 0)
  end

  -- The `history` pair of the job object: none in a pop's for aqless's workers, which do not
  -- read it (`apart.no_history`: data_apart_no_history in rateLimit.pop).
  local function history_pair(D, jid, apart)
    if apart ~= nil and apart.no_history then return '' end
    return ',"history":' .. History.json(D, jid)
  end

  -- The job object (17 keys classic, 18 reqless) as JSON text, or nil when the job does not
  -- exist. `f`: the job's fields (Job.read_full) when the caller holds them as they are
  -- stored. Concatenated, not encoded: the values are those cjson would write of the decoded
  -- fields (empty lists as {}, numbers to 14 digits). `unrelated`: the caller knows that the
  -- job has neither dependents nor dependencies. `apart`: a list that takes the job's stored
  -- data text (aqless's own pops, see `data_apart` in rateLimit.pop), which the object then
  -- leaves out: escaped into a JSON string, a payload of 100 KB costs the server ~130 µs
  -- (`apart.inline`: the data stays in the object, see Worker.PUSHED; `apart.beside`: a
  -- pop with data_beside, whose fields have no data: false in its place, the worker reads
  -- it, see Job.read_for_pop).
  -- `own`: a reply only aqless reads (its pops and pushes): the object ends with the job's
  -- `attempt` (aqless's own field, see Job.check_attempt; 0 when absent) and its checkpoint.
  function Job.json(D, jid, f, unrelated, apart, own)
    f = f or Job.read_full(jid)
    if not f[JID] then return nil end
    local dependents, dependencies = '{}', '{}'
    if not unrelated then dependents, dependencies = relations_json(jid) end
    local spawned = 'false'
    if f[SPAWNED_FROM_JID] then spawned = json_string(f[SPAWNED_FROM_JID]) end
    local throttles_key, throttles = '', ''
    if D.show_throttles then
      throttles_key, throttles = ',"throttles":', json_stored(f[THROTTLES])
    end
    local tracked = 'false'
    if Events.is_tracked(jid) then tracked = 'true' end
    local data_key, data = '', ''
    if apart == nil or apart.inline then
      data_key, data = ',"data":', cjson.encode(f[DATA] or '{}')
    elseif apart.beside and not f[DATA] then
      apart[#apart + 1] = false
    else
      apart[#apart + 1] = f[DATA] or '{}'
    end
    return '{"jid":"' .. json_chars(f[JID]) ..
      '","klass":"' .. name_chars(f[KLASS] or '') ..
      '","state":"' .. name_chars(f[STATE] or '') ..
      '","queue":"' .. name_chars(f[QUEUE] or '') ..
      '","worker":"' .. name_chars(f[WORKER] or '') ..
      '","tracked":' .. tracked ..
      ',"priority":' .. json_number(f[PRIORITY]) ..
      ',"expires":' .. json_number(f[EXPIRES]) ..
      ',"retries":' .. json_number(f[RETRIES]) ..
      ',"remaining":' .. whole_text(f[REMAINING]) ..
      data_key .. data ..
      ',"tags":' .. json_stored(f[TAGS]) ..
      history_pair(D, jid, apart) ..
      ',"failure":' .. json_stored(f[FAILURE]) ..
      ',"spawned_from_jid":' .. spawned ..
      ',"dependents":' .. dependents ..
      ',"dependencies":' .. dependencies ..
      throttles_key .. throttles .. own_pairs(own, f[ATTEMPT], f[CHECKPOINT]) .. '}'
  end
end

-- The JSON list of the objects of the jids that exist, in order (`known`: jid -> fields,
-- `apart`: see Job.json); none is written as the dialect writes an empty list.
function Job.list_json(D, jids, known, apart, own)
  -- one EXISTS of every job's dependents and dependencies first: mostly none exists, and
  -- then no job asks after its own
  local unrelated = false
  if #jids > 1 and #jids <= 2500 then
    local keys = {}
    for i = 1, #jids do
      local jid = jids[i]
      keys[2 * i - 1], keys[2 * i] = Keys.dependents(jid), Keys.dependencies(jid)
    end
    unrelated = call('EXISTS', unpack(keys)) == 0
  end
  local texts = {}
  for i = 1, #jids do
    local jid = jids[i]
    local text = Job.json(D, jid, known and known[jid] or nil, unrelated, apart, own)
    if text ~= nil then texts[#texts + 1] = text end
  end
  if #texts == 0 then return D.list(texts) end
  return '[' .. table.concat(texts, ',') .. ']'
end

-- The queue whose sets hold the job. It is the job's `queue` field, except after a retry
-- with another queue's name: the reference puts the job in that queue's sets but leaves
-- `queue` as it was (a quirk clients may rely on), so the sets' queue is kept in the
-- hidden field `held_in` until the job is placed again. Every set operation goes through
-- here, so the job never sits in two queues' sets. Another client may have moved the job
-- without clearing `held_in`: it counts only while that queue really holds the job.
function Job.home(job, jid)
  return Job.home_of(job.queue, job.held_in, jid)
end

-- Job.home of the job's `queue` and `held_in` fields (nil where absent).
function Job.home_of(queue, held_in, jid)
  if held_in ~= nil and held_in ~= queue then
    for _, kind in ipairs(QUEUE_SETS) do
      if call('ZSCORE', Keys.queue(held_in, kind), jid) then return held_in end
    end
  end
  return queue
end

-- Forgets `held_in` once the job is placed by its `queue` field again.
function Job.settle_home(jid, job) Job.forget_held_in(jid, job.held_in) end

-- The same, given the field (nil where absent).
function Job.forget_held_in(jid, held_in)
  if held_in ~= nil then call('HDEL', Keys.job(jid), 'held_in') end
end

function Job.to_work(queue, jid, priority, t)
  local score = work_score(priority, t)
  call('ZADD', Keys.queue(queue, 'work'), score, jid)
  Groups.enter(queue, jid, score)
end

-- Removes the job from every set of the queue that holds jobs.
function Job.leave_queue(queue, jid)
  for _, kind in ipairs(QUEUE_SETS) do call('ZREM', Keys.queue(queue, kind), jid) end
end

-- Removes a running job from the sets of its queue that can hold it: the locks, the work
-- set (a throttle release may have put it back there) and, as the reference does, the
-- scheduled set. A job enters the depends and throttled sets only in those states and
-- leaves them before it can run, so a finishing job is not looked for there. `finished`:
-- the job leaves its queue for good (no next queue), so that, within jobs.outcomes, its
-- removals from the work and scheduled sets may wait for the call's flush as well (nothing
-- else in the call adds it back: an outcome naming the same job again flushes first).
function Job.leave_running(queue, jid, finished)
  if finished and Stats.folded then return Stats.remove_finished(queue, jid) end
  if finished then
    Stats.remove(Keys.queue(queue, 'work'), jid)
    Stats.remove(Keys.queue(queue, 'scheduled'), jid)
  else
    call('ZREM', Keys.queue(queue, 'work'), jid)
    call('ZREM', Keys.queue(queue, 'scheduled'), jid)
  end
  Stats.remove(Keys.queue(queue, 'locks'), jid)
end

function Job.register_queue(queue, now)
  call('ZADD', Keys.queues(), 'NX', now, queue)
end

-- DEPEND: registers the dependencies that are neither missing nor complete; returns how
-- many were registered.
function Job.add_dependencies(jid, dependencies)
  Job.unrelated = nil
  local added = 0
  for _, dependency in ipairs(dependencies) do
    local state = call('HGET', Keys.job(dependency), 'state')
    if state and state ~= 'complete' then
      call('SADD', Keys.dependents(dependency), jid)
      call('SADD', Keys.dependencies(jid), dependency)
      added = added + 1
    end
  end
  return added
end

-- The jids of the jobs depending on a job, read together with whether anything is tracked
-- (Events.is_tracked): one EXISTS of both keys answers both when neither exists. Given
-- `pending` (the pending set of the job's only throttle, Throttle.sole_pending), the same
-- EXISTS also asks after it, and the second value tells whether it is known not to exist
-- (when something does, one more EXISTS tells which: the throttle's release would have
-- asked anyway).
function Job.dependents_and_tracking(jid, pending)
  local unrelated = Job.unrelated
  if unrelated and unrelated[jid] and (pending == nil or unrelated.pending[pending]) then
    return NOTHING, pending ~= nil  -- (tracking: Events.is_tracked asks once a call)
  end
  local existing, none_pending = nil, false
  if pending == nil then
    existing = call('EXISTS', Keys.tracked(), Keys.dependents(jid))
  else
    existing = call('EXISTS', Keys.tracked(), Keys.dependents(jid), pending)
    if existing == 0 then
      none_pending = true
    else
      local pending_exists = call('EXISTS', pending)
      none_pending = pending_exists == 0
      existing = existing - pending_exists
    end
  end
  if existing == 0 then
    Events.learn_tracked(false)
    return NOTHING, none_pending
  end
  local dependents = call('SMEMBERS', Keys.dependents(jid))
  Events.learn_tracked(existing == 2 or #dependents == 0)
  return dependents, none_pending
end

-- What a call of many outcomes (jobs.outcomes) learns before they run: one EXISTS of the
-- dependents sets of the jobs its completes name and of their queues' throttles' pending
-- sets. When none exists, Job.unrelated holds those jids, and `pending` those sets, and the
-- completes ask nothing more (Job.dependents_and_tracking). Whatever could make one of
-- those keys within the call (Job.add_dependencies, Throttle.park) forgets it all.
-- `completes`: the jid and the queue of each complete, in turn.
function Job.learn_unrelated(completes)
  Job.unrelated = nil
  if #completes < 4 then return end
  local keys, jids, pending, queue = {}, {}, {}, nil
  for i = 1, #completes, 2 do
    local jid = completes[i]
    keys[#keys + 1] = Keys.dependents(jid)
    jids[jid] = true
    if completes[i + 1] ~= queue then
      queue = completes[i + 1]
      local key = Keys.throttle_set(Keys.queue_throttle(queue), '-pending')
      if not pending[key] then
        pending[key] = true
        keys[#keys + 1] = key
      end
    end
  end
  if #keys > 5000 or call('EXISTS', unpack(keys)) > 0 then return end
  jids.pending = pending
  Job.unrelated = jids
end

-- A job waiting on nothing any more leaves its queue's depends set: scheduled if it was put
-- with a delay still to run (its `scheduled` time), else waiting. `f` holds its queue,
-- priority and scheduled fields.
function Job.leave_depends(now, jid, f)
  call('ZREM', Keys.queue(f.queue, 'depends'), jid)
  if f.scheduled ~= nil then
    call('ZADD', Keys.queue(f.queue, 'scheduled'), f.scheduled, jid)
    call('HSET', Keys.job(jid), 'state', 'scheduled')
    call('HDEL', Keys.job(jid), 'scheduled')
  else
    Job.to_work(f.queue, jid, tonumber(f.priority) or 0, now)
    call('HSET', Keys.job(jid), 'state', 'waiting')
  end
end

-- RELEASE: dependents whose last dependency this was become waiting (or scheduled).
function Job.release_dependents(jid, now, dependents)
  if #dependents == 0 then return end
  for _, dependent in ipairs(dependents) do
    call('SREM', Keys.dependencies(dependent), jid)
    if call('SCARD', Keys.dependencies(dependent)) == 0 then
      local f = Job.read(dependent, {'queue', 'priority', 'scheduled'})
      if f.queue ~= nil then Job.leave_depends(now, dependent, f) end
    else
      Flows.first_ended(now, dependent, jid)
    end
  end
  call('DEL', Keys.dependents(jid))
end

-- Leaves a failure group: the list, the group when empty, the `failed` counter of the
-- failure's day.
function Job.leave_failure_group(jid, failure_text, stats_queue, now)
  local failure = decode_stored(failure_text) or {}
  local group = failure.group
  if type(group) ~= 'string' then return end
  call('LREM', Keys.failed(group), 0, jid)
  if call('EXISTS', Keys.failed(group)) == 0 then call('SREM', Keys.failures(), group) end
  Stats.count(stats_queue, tonumber(failure.when) or now, {failed = -1})
end

-- Deletes a job's keys (cancel and the retention purge).
function Job.delete(D, jid, tags)
  Tags.all_off(D, jid, tags)
  call('DEL', Keys.job(jid), Keys.history(jid))
end

---------------------------------------------------------------------------------------------
-- cancel

-- Why a cancel removing `all` (Flows.removal's, with `named` and `parents`) is refused, nil
-- when it is not: one of them is a dependency of a job it leaves, or a job of a flow runs.
function Job.cancel_refusal(all, named, parents)
  for _, jid in ipairs(all) do
    local parent = parents[jid]
    for _, dependent in ipairs(call('SMEMBERS', Keys.dependents(jid))) do
      if not (named[dependent] or dependent == parent) then
        return 'Cancel(): ' .. jid .. ' is a dependency of ' .. dependent ..
          ' but is not mentioned to be canceled'
      end
    end
  end
  return Flows.removal_refusal(all, parents)
end

function Job.cancel(D, now, jids)
  local all, named, parents = Flows.removal(jids)
  local refusal = Job.cancel_refusal(all, named, parents)
  if refusal then raise(refusal) end
  for _, jid in ipairs(all) do
    local job = Job.read(jid, {'state', 'queue', 'failure', 'worker', 'tags', 'held_in',
      'dedup'})
    if job.state ~= 'complete' then
      local payload = Events.canceled_payload(jid, job.queue, job.worker)
      Events.publish('log', payload)
      if job.worker ~= nil and job.worker ~= '' then
        call('ZREM', Keys.worker_jobs(job.worker), jid)
        Events.publish('w:' .. job.worker, payload)
      end
      if job.queue ~= nil then Job.leave_queue(Job.home(job, jid), jid) end
      Throttle.release_all(jid, now)
      -- a job re-put while holding its throttle waits for itself in the pending set: the
      -- release above moved it back to the work set of its queue, which it is leaving
      if job.queue ~= nil then call('ZREM', Keys.queue(job.queue, 'work'), jid) end
      for _, dependency in ipairs(call('SMEMBERS', Keys.dependencies(jid))) do
        call('SREM', Keys.dependents(dependency), jid)
      end
      call('DEL', Keys.dependencies(jid))
      if job.state == 'failed' then
        Job.leave_failure_group(jid, job.failure, job.queue or '', now)
      end
      Dedup.release(jid, job.dedup)
      Batch.ended(now, jid, 'failed')
      Job.delete(D, jid, Tags.parse(job.tags))
      Events.if_tracked('canceled', jid)
    elseif parents[jid] ~= nil then  -- a completed job of a flow goes with its flow
      call('ZREM', Keys.completed(), jid)
      Job.delete(D, jid, Tags.parse(job.tags))
    end
    local parent = parents[jid]
    if parent and not named[parent] then Flows.leave_parent(now, jid, parent) end
  end
  return all
end

---------------------------------------------------------------------------------------------
-- dependencies, priority, log, tracking, tags

local function release_from_depends(jid, now)
  local job = Job.read(jid, {'queue', 'priority'})
  if job.queue == nil then return end
  call('ZREM', Keys.queue(job.queue, 'depends'), jid)
  Job.to_work(job.queue, jid, tonumber(job.priority) or 0, now)
  call('HSET', Keys.job(jid), 'state', 'waiting')
end

-- `depends jid on|off jid...` / `depends jid off all`.
function Job.depends(D, now, jid, command, dependencies)
  check(jid, 'Job(): no jid provided')
  check(command, 'Depends(): Arg "command" missing')
  local state = field(call('HGET', Keys.job(jid), 'state'))
  check(state == 'depends',
    'Depends(): Job ' .. jid .. ' not in the depends state: ' .. tostring(state or false))
  if command == 'on' then
    Job.add_dependencies(jid, dependencies)
  elseif command == 'off' then
    if dependencies[1] == 'all' then
      for _, dependency in ipairs(call('SMEMBERS', Keys.dependencies(jid))) do
        call('SREM', Keys.dependents(dependency), jid)
      end
      call('DEL', Keys.dependencies(jid))
      release_from_depends(jid, now)
    else
      for _, dependency in ipairs(dependencies) do
        call('SREM', Keys.dependents(dependency), jid)
        call('SREM', Keys.dependencies(jid), dependency)
      end
      if call('SCARD', Keys.dependencies(jid)) == 0 then release_from_depends(jid, now) end
    end
  else
    raise('Depends(): Argument "command" must be "on" or "off"')
  end
  return 1
end

function Job.set_priority(D, now, jid, priority)
  check(jid, 'Job(): no jid provided')
  local value = number(priority)
  check(value, 'Priority(): Arg "priority" missing or not a number: ' .. tostring(priority))
  local job = Job.read(jid, {'queue', 'held_in'})
  if job.queue == nil then refuse(D, 'priority_missing', {jid = jid}) end
  local work = Keys.queue(Job.home(job, jid), 'work')
  if job.queue ~= '' and call('ZSCORE', work, jid) then
    call('ZADD', work, value, jid)
    Groups.enter(Job.home(job, jid), jid, value)
  end
  call('HSET', Keys.job(jid), 'priority', value)
  return value
end

function Job.log(D, now, jid, message, data)
  check(jid, "Log(): Argument 'jid' missing")
  check(message, "Log(): Argument 'message' missing")
  local item = nil
  if data ~= nil then
    item = decode(data)
    check(type(item) == 'table', "Log(): Argument 'data' not cjson: " .. data)
  end
  check(call('EXISTS', Keys.job(jid)) == 1, 'Log(): Job ' .. jid .. ' does not exist')
  History.append(jid, now, message, item)
end

-- {"jobs": [objects], "expired": [jids]} over every tracked jid, as JSON text (empty lists
-- written {}).
function Job.tracked(D)
  local jobs, expired = {}, {}
  for _, jid in ipairs(call('ZRANGE', Keys.tracked(), 0, -1)) do
    local text = Job.json(D, jid)
    if text ~= nil then jobs[#jobs + 1] = text else expired[#expired + 1] = jid end
  end
  local list = '{}'
  if #jobs > 0 then list = '[' .. table.concat(jobs, ',') .. ']' end
  return '{"jobs":' .. list .. ',"expired":' .. cjson.encode(expired) .. '}'
end

-- `track track|untrack jid`: returns the JSON text of how many members changed.
function Job.track(D, now, action, jid)
  check(jid, 'Track(): Arg "jid" missing')
  check(call('EXISTS', Keys.job(jid)) == 1, 'Track(): Job does not exist')
  local word = string.lower(action)
  Events.forget()
  if word == 'track' then
    Events.publish('track', jid)
    return cjson.encode(call('ZADD', Keys.tracked(), now, jid))
  elseif word == 'untrack' then
    Events.publish('untrack', jid)
    return cjson.encode(call('ZREM', Keys.tracked(), jid))
  end
  raise('Track(): Unknown action "' .. action .. '"')
end

local function job_tags(jid)
  check(jid, 'Tag(): Arg "jid" missing')
  local text = call('HGET', Keys.job(jid), 'tags')
  check(text, 'Tag(): Job ' .. jid .. ' does not exist')
  return Tags.parse(text)
end

function Job.add_tags(D, now, jid, tags)
  local list = job_tags(jid)
  for _, tag in ipairs(tags) do check(tag ~= '', 'Tag(): Arg "tag" empty') end
  for _, tag in ipairs(tags) do
    if not contains(list, tag) then list[#list + 1] = tag end
    Tags.on(jid, tag, now)
  end
  call('HSET', Keys.job(jid), 'tags', cjson.encode(list))
  return D.list(list)
end

function Job.remove_tags(D, now, jid, tags)
  local kept = without(job_tags(jid), set_of(tags))
  for _, tag in ipairs(tags) do Tags.off(D, jid, tag) end
  call('HSET', Keys.job(jid), 'tags', cjson.encode(kept))
  return D.list(kept)
end
