-- Workflows (aqless's own, docs/guides/workflows.md): a job whose code is a workflow parks
-- between its steps, asleep until a time or waiting for a signal. Parked, it is an ordinary
-- scheduled job to every client and holds no worker. Its progress is in its data, written
-- with the park; its signals are extra fields of the job hash, living and going with it:
--   wf-signals       how many signals it was sent
--   wf-signal:<n>    the n-th, as JSON text {"signal", "id", "at", "payload"}
--   wf-id:<id>       n of the signal of that id (a second delivery of it is taken once)
--   wf-taken:<n>     the wait (its key) that took the n-th signal
--   wf-wait:<key>    the n the wait of that key took, or 'timeout'
--   wf-parked        the signal the parked job waits for
-- A workflow waiting for its children (ctx.gather) is their flow parent (flows.lua): its
-- children are its dependencies, each under the policy `continue` (a failure for good
-- releases it; its code reads the failure), and it parks in `depends` until they are done.

-- (the functions are Job's: the script's top-level locals are few, tests/scripts/test_locals.py)

-- The running job `jid` held by `worker` under `attempt`; refused (nothing written) when it
-- is not.
function Job.workflow_held(verb, jid, worker, attempt, data)
  check(jid, 'Job(): no jid provided')
  check(worker, verb .. '(): Arg "worker" missing')
  if attempt == '' then attempt = nil end  -- (a job popped by another client has none)
  check(data ~= nil and pcall(cjson.decode, data),
    verb .. '(): Arg "data" missing or not JSON: ' .. tostring(data))
  local job = Job.read(jid, {'queue', 'state', 'worker', 'held_in', 'throttles', 'attempt'})
  check(job.state ~= nil, verb .. '(): Job ' .. jid .. ' does not exist')
  Job.check_attempt(verb, jid, attempt, job.attempt)
  check(job.state == 'running',
    verb .. '(): Job ' .. jid .. ' is not currently running: ' .. job.state)
  check(job.worker == worker,
    verb .. '(): Job ' .. jid .. ' has been given to another worker: ' .. tostring(job.worker))
  return job
end

-- Hands the held job back as scheduled at `at`, with `data`, spending no retry; or, with
-- `depending`, among its queue's dependent jobs (at `now`) until its dependencies are done.
-- A park due before every other scheduled job of its queue publishes a put event: an idle
-- worker waits until the first scheduled job its last pop saw is due (rateLimit.pop's
-- "wait"); told, it pops again and learns the earlier time.
function Job.workflow_park(now, jid, job, worker, data, at, why, depending)
  local key, home = Keys.job(jid), Job.home(job, jid)
  local scheduled = Keys.queue(home, 'scheduled')
  call('HDEL', key, 'grace')
  call('ZREM', Keys.queue(home, 'locks'), jid)
  call('ZREM', Keys.worker_jobs(worker), jid)
  Throttle.release_all(jid, now, job.throttles or false)
  History.append(jid, now, 'parked', {reason = why, worker = worker, ['until'] = at})
  if depending then
    call('ZADD', Keys.queue(job.queue, 'depends'), at, jid)
    call('HSET', key, 'state', 'depends', 'worker', '', 'expires', 0, 'data', data)
    return
  end
  local head = call('ZRANGE', scheduled, 0, 0, 'WITHSCORES')[2]
  call('ZADD', scheduled, at, jid)
  call('HSET', key, 'state', 'scheduled', 'worker', '', 'expires', 0, 'data', data)
  if head == nil or at < tonumber(head) then Events.put(jid, home) end
end

function Job.sleep(now, jid, worker, attempt, data, at)
  local t = number(at)
  check(t ~= nil, 'Sleep(): Arg "until" not a number: ' .. tostring(at))
  local job = Job.workflow_held('Sleep', jid, worker, attempt, data)
  Job.workflow_park(now, jid, job, worker, data, t, 'asleep')
  return 'scheduled'
end

-- The first signal named `signal` that no wait took yet: its n and text, or nil.
function Job.untaken_signal(key, signal)
  local count = tonumber(call('HGET', key, 'wf-signals')) or 0
  for n = 1, count do
    if call('HEXISTS', key, 'wf-taken:' .. n) == 0 then
      local text = call('HGET', key, 'wf-signal:' .. n)
      if text and cjson.decode(text).signal == signal then return n, text end
    end
  end
  return nil
end

function Job.await_signal(now, jid, worker, attempt, data, wait, signal, at)
  check(wait and wait ~= '', 'AwaitSignal(): Arg "wait" missing')
  check(signal and signal ~= '', 'AwaitSignal(): Arg "signal" missing')
  local t = number(at)
  check(t ~= nil, 'AwaitSignal(): Arg "until" not a number: ' .. tostring(at))
  local job = Job.workflow_held('AwaitSignal', jid, worker, attempt, data)
  local key = Keys.job(jid)
  local taken = call('HGET', key, 'wf-wait:' .. wait)
  if taken == 'timeout' then return 'timeout' end
  if taken then return call('HGET', key, 'wf-signal:' .. taken) end
  local n, text = Job.untaken_signal(key, signal)
  if n ~= nil then
    call('HSET', key, 'wf-wait:' .. wait, n, 'wf-taken:' .. n, wait)
    call('HDEL', key, 'wf-parked')
    return text
  end
  if t <= now then
    call('HSET', key, 'wf-wait:' .. wait, 'timeout')
    call('HDEL', key, 'wf-parked')
    return 'timeout'
  end
  Job.workflow_park(now, jid, job, worker, data, t, 'waiting for ' .. signal)
  call('HSET', key, 'wf-parked', signal)
  return 'parked'
end

function Job.signal(now, jid, signal, payload, id)
  check(jid, 'Job(): no jid provided')
  check(signal and signal ~= '', 'Signal(): Arg "signal" missing')
  check(payload ~= nil and pcall(cjson.decode, payload),
    'Signal(): Arg "payload" missing or not JSON: ' .. tostring(payload))
  check(id and id ~= '', 'Signal(): Arg "id" missing')
  local key = Keys.job(jid)
  local v = call('HMGET', key, 'state', 'queue', 'priority', 'held_in', 'wf-parked')
  local state = v[1]
  check(state, 'Signal(): Job ' .. jid .. ' does not exist')
  -- a delivery sent again (a retried webhook) is a duplicate, even once the job has ended
  if call('HEXISTS', key, 'wf-id:' .. id) == 1 then return 'duplicate' end
  check(state ~= 'complete' and state ~= 'failed',
    'Signal(): Job ' .. jid .. ' has ended: ' .. tostring(state))
  local n = call('HINCRBY', key, 'wf-signals', 1)
  local text = '{"signal":' .. json_string(signal) .. ',"id":' .. json_string(id) ..
    ',"at":' .. json_number(now) .. ',"payload":' .. payload .. '}'
  call('HSET', key, 'wf-signal:' .. n, text, 'wf-id:' .. id, n)
  if state ~= 'scheduled' or v[5] ~= signal then return 'kept' end
  local home = Job.home_of(v[2], v[4] or nil, jid)
  call('ZREM', Keys.queue(home, 'scheduled'), jid)
  Job.to_work(home, jid, tonumber(v[3]) or 0, now)
  call('HSET', key, 'state', 'waiting')
  call('HDEL', key, 'wf-parked')
  History.append(jid, now, 'signalled', {signal = signal, id = id})
  -- as a put: pushed to an offering worker (no pop's round trip), then the put event
  Worker.push(now, home)
  Events.put(jid, home)
  return 'woken'
end

-- The children's jids of a gather or a race (`verb`), checked: a JSON list of jids, at
-- least one.
function Job.gathered_children(verb, text)
  local ok, children = pcall(cjson.decode, text or '')
  local refusal = verb .. '(): Arg "children" not a JSON list of jids: ' .. tostring(text)
  check(ok and type(children) == 'table' and #children > 0, refusal)
  for _, child in ipairs(children) do
    check(type(child) == 'string' and child ~= '', refusal)
  end
  return children
end

-- Whether a child in `state` (false: gone) has yet to end.
function Job.child_pending(state)
  return state and state ~= 'complete' and state ~= 'failed'
end

-- Lists `children` among the workflow's flow children, after those listed before (earlier
-- gathers' or the flow's that put it: a cancel of the workflow reaches them all), and makes
-- each that exists its child under the policy continue. Their states (false: gone), in order.
function Job.adopt_children(jid, children)
  call('SET', Keys.flows(), 1)
  local listed = cjson.decode(call('HGET', Keys.job(jid), 'flow_children') or '[]')
  local seen = {}
  for _, child in ipairs(listed) do seen[child] = true end
  for _, child in ipairs(children) do
    if not seen[child] then listed[#listed + 1], seen[child] = child, true end
  end
  call('HSET', Keys.job(jid), 'flow_children', cjson.encode(listed))
  local states = {}
  for i, child in ipairs(children) do
    local state = call('HGET', Keys.job(child), 'state')
    if state then
      call('HSET', Keys.job(child), 'flow_parent', jid, 'flow_policy', 'continue')
    end
    states[i] = state or false
  end
  return states
end

-- Parks the held workflow in depends on those of `children` that have yet to end.
function Job.await_pending(now, jid, job, worker, data, children, states, why)
  for i, child in ipairs(children) do
    if Job.child_pending(states[i]) then
      call('SADD', Keys.dependencies(jid), child)
      call('SADD', Keys.dependents(child), jid)
    end
  end
  call('HDEL', Keys.job(jid), 'wf-first')
  Job.workflow_park(now, jid, job, worker, data, now, why, true)
end

function Job.await_children(now, jid, worker, attempt, data, children_text)
  local children = Job.gathered_children('AwaitChildren', children_text)
  local job = Job.workflow_held('AwaitChildren', jid, worker, attempt, data)
  local states = Job.adopt_children(jid, children)
  for _, state in ipairs(states) do
    if Job.child_pending(state) then
      Job.await_pending(now, jid, job, worker, data, children, states, 'waiting for children')
      return 'parked'
    end
  end
  return Flows.children(jid)
end

-- A race (ctx.first) of `key`: its winner is the first of `children` to end. One that had
-- ended (or gone) when the race is first looked at wins, the first such in the order given;
-- else the workflow parks in depends until one ends (Flows.first_ended keeps it). The
-- winner is kept (`wf-won:<key>`): every later look answers it. With `cancel`, the losers
-- that have yet to end are cancelled (Job.cancel_losers).
function Job.await_first(D, now, jid, worker, attempt, data, key, children_text, cancel)
  check(key and key ~= '', 'AwaitFirst(): Arg "key" missing')
  local children = Job.gathered_children('AwaitFirst', children_text)
  local job = Job.workflow_held('AwaitFirst', jid, worker, attempt, data)
  local won = call('HGET', Keys.job(jid), 'wf-won:' .. key)
  if not won then
    local states = Job.adopt_children(jid, children)
    for i, child in ipairs(children) do
      if not won and not Job.child_pending(states[i]) then won = child end
    end
    if not won then
      Job.await_pending(now, jid, job, worker, data, children, states,
        'waiting for the first of its children')
      call('HSET', Keys.job(jid), 'wf-first', key)
      return 'parked'
    end
    call('HSET', Keys.job(jid), 'wf-won:' .. key, won)
  end
  call('HDEL', Keys.job(jid), 'wf-first')
  if cancel == 'cancel' then Job.cancel_losers(D, now, jid, children, won) end
  return json_array({Flows.outcome(won)})
end

-- Cancels each of `children` but `won` that has yet to end, as Job.cancel would, once it
-- has left the workflow's flow (so one that runs may go); one whose cancel would still be
-- refused (another job depends on it, or it is a flow's parent whose job runs) is left.
function Job.cancel_losers(D, now, jid, children, won)
  for _, child in ipairs(children) do
    if child ~= won and Job.child_pending(call('HGET', Keys.job(child), 'state')) then
      local all, named, parents = Flows.removal({child})
      if parents[child] == jid then  -- as once it has left the workflow's flow
        parents[child] = nil
        if call('HEXISTS', Keys.job(child), 'flow_children') == 1 then parents[child] = false end
      end
      if Job.cancel_refusal(all, named, parents) == nil then
        Flows.leave_parent(now, child, jid)
        call('HDEL', Keys.job(child), 'flow_parent', 'flow_name', 'flow_policy')
        Job.cancel(D, now, {child})
      end
    end
  end
end
