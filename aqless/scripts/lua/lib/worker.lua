-- Workers: ql:workers (name -> last activity) and ql:w:<worker>:jobs (jid -> lock expiry),
-- and aqless's offers: ql:offers:<queue> (worker -> "<slots> <until>").

-- Forgets workers idle for longer than max-worker-age (done before every listing).
local function expire_workers(now)
  local horizon = now - Config.number('max-worker-age')
  local idle = call('ZRANGEBYSCORE', Keys.workers(), 0, horizon)
  for _, worker in ipairs(idle) do call('DEL', Keys.worker_jobs(worker)) end
  if #idle > 0 then call('ZREMRANGEBYSCORE', Keys.workers(), 0, horizon) end
end

-- {"jobs": [...], "stalled": [...]} of one worker, latest expiry first.
function Worker.jobs(now, worker)
  expire_workers(now)
  local key = Keys.worker_jobs(worker)
  return {
    jobs = call('ZREVRANGEBYSCORE', key, now + 8640000, now),
    stalled = call('ZREVRANGEBYSCORE', key, now, 0),
  }
end

-- One {"name", "jobs", "stalled"} per worker, most recently active first.
function Worker.counts(now)
  expire_workers(now)
  local result = {}
  for i, worker in ipairs(call('ZREVRANGE', Keys.workers(), 0, -1)) do
    local key = Keys.worker_jobs(worker)
    result[i] = {
      name = worker,
      jobs = call('ZCOUNT', key, now, now + 8640000),
      stalled = call('ZCOUNT', key, 0, now),
    }
  end
  return result
end

function Worker.forget(names)
  check(#names > 0, 'Worker(): wrong number of arguments: give at least one worker name')
  call_batched('ZREM', Keys.workers(), names)
end

-- The server may hold jobs for a worker that the worker never heard of: a pop whose reply
-- a dropped connection lost, a push lost with its subscription, or the jobs of an earlier
-- process under the same name (aqless-run --resume). Each job named (none named: every job
-- held under `worker`) that is running under `worker` is handed to it again as a pop hands
-- a job out: a new, rising attempt (so a run of an earlier attempt, if one still goes on
-- somewhere, is fenced out: see Job.check_attempt), a fresh lock, and a `taken-back`
-- history entry {worker} (not a second `popped`: the job was popped once). Jobs no longer
-- running, or held by another worker, are left alone and not listed.
function Worker.take_back(now, worker, jids)
  check(worker, 'TakeBack(): Arg "worker" missing')
  if #jids == 0 then jids = call('ZRANGE', Keys.worker_jobs(worker), 0, -1) end
  local taken, seen = {}, {}
  local entry = History.pair_text(now, 'taken-back', 'worker', worker)
  for _, jid in ipairs(jids) do
    local v = call('HMGET', Keys.job(jid), 'state', 'worker', 'queue', 'held_in', 'attempt')
    if not seen[jid] and v[1] == 'running' and v[2] == worker then
      seen[jid] = true
      local job = {queue = v[3] or nil, held_in = v[4] or nil}
      local expires = now + Config.heartbeat(job.queue or '')
      local attempt = math.floor(tonumber(v[5]) or 0) + 1
      call('HSET', Keys.job(jid), 'expires', expires, 'attempt', attempt)
      History.push(jid, entry)
      call('ZADD', Keys.worker_jobs(worker), expires, jid)
      call('ZADD', Keys.queue(Job.home(job, jid), 'locks'), expires, jid)
      Events.if_tracked('popped', jid)
      taken[#taken + 1] = jid
    end
  end
  if #taken == 0 then return '[]' end
  call('ZADD', Keys.workers(), now, worker)
  return Job.list_json(REQLESS, taken, nil, nil, true)
end

-- Offers (aqless's own; other clients neither make nor see them). A worker that found its
-- queues empty offers to take their next jobs; a put into such a queue then pops a job for
-- the offering worker with the most free slots and publishes the pop's reply on
-- ql:push:<worker>: the job reaches the worker in one hop instead of an event and a pop.
-- An offer counts until it lapses, while the worker listens on that channel, and while it
-- holds fewer unexpired locks than its slots; otherwise the job waits for a pop as ever.
-- A push is also told on ql:pushed (the jid), so that the workers that listen to put events
-- do not pop for a job that is gone; put publishes its put event after both (lifecycle.lua),
-- so a worker always hears of the push before the put. An offering worker listens to put
-- events only while few others do (the offer's reply counts them): a put then reaches an
-- idle fleet in a few deliveries, not two per idle worker.

local function push_channel(worker) return 'push:' .. worker end

function Worker.offer(now, worker, slots, seconds, queues)
  check(worker, 'Offer(): Arg "worker" missing')
  local n = number(slots)
  check(n and n >= 1, 'Offer(): Arg "slots" not a positive number: ' .. tostring(slots))
  local lasts = number(seconds)
  check(lasts and lasts > 0, 'Offer(): Arg "seconds" not a positive number: ' ..
    tostring(seconds))
  check(#queues > 0, 'Offer(): wrong number of arguments: give at least one queue name')
  local offer = string.format('%d %.3f', whole(n), now + lasts)
  for _, queue in ipairs(queues) do call('HSET', Keys.offers(queue), worker, offer) end
  -- how many workers hear put events beside their pushes (the put listeners, each subscribed
  -- to ql:pushed): an offering worker needs none unless too few do (nil: not allowed to ask)
  local listeners = redis.pcall('PUBSUB', 'NUMSUB', Keys.channel('pushed'))
  if type(listeners) == 'table' then return listeners[2] end
end

function Worker.withdraw(worker, queues)
  check(worker, 'Withdraw(): Arg "worker" missing')
  for _, queue in ipairs(queues) do call('HDEL', Keys.offers(queue), worker) end
end

-- Of (at most) eight offers drawn at random, the listening worker with the most free
-- slots, or nil. Lapsed offers met on the way are dropped.
local function taker(now, queue)
  local key = Keys.offers(queue)
  -- pcall: a user whose ACL predates offers (no HLEN) still puts, without pushes
  local count = redis.pcall('HLEN', key)
  if type(count) ~= 'number' or count == 0 then return nil end
  -- the configuration now, in the one HGETALL the push's pop reads it with: the listeners'
  -- check (aqless-pubsub) then takes its option from it instead of an HGET of its own
  Config.stored()
  local offers
  if count <= 8 then
    offers = call('HGETALL', key)  -- HRANDFIELD costs ten times more on a small hash
  else
    offers = call('HRANDFIELD', key, 8, 'WITHVALUES')
  end
  local best, most = nil, 0
  for i = 1, #offers, 2 do
    local worker = offers[i]
    local slots, lapses = string.match(offers[i + 1], '^(%d+) (%S+)$')
    if slots == nil or (tonumber(lapses) or 0) < now then
      call('HDEL', key, worker)
    else
      local free = tonumber(slots) - call('ZCOUNT', Keys.worker_jobs(worker), now, '+inf')
      if free > most
        and Events.listeners(push_channel(worker)) > 0 then
        best, most = worker, free
      end
    end
  end
  return best
end

-- The pushed job's object: its data in it (a message is one text), its history left out, as
-- the worker's own pops leave it out (see Job.json)
Worker.PUSHED = {no_history = true, inline = true}

-- After a put made `queue` hold a waiting job: pops one job for an offering worker and
-- publishes it to that worker (exactly a put followed by that worker's pop). `alone`: the
-- caller knows that of the tracking set, the queue's throttle and its offers only the offers
-- exist (put's one EXISTS), so the pop asks after neither of the others.
-- `chosen`: the taker Worker.pickup already drew (then it is not drawn again). (A put whose
-- new job is sure to be the pop's only choice takes a shorter road: Worker.hand_over.)
function Worker.push(now, queue, alone, chosen)
  local worker = chosen or taker(now, queue)
  if worker == nil then return end
  if alone then
    Events.learn_tracked(false)
    Throttle.learn_unlimited(Keys.queue_throttle(queue))
  end
  local popped, known = Queue.pop_jids(REQLESS, now, queue, worker, 1)
  if #popped > 0 then
    Events.publish(push_channel(worker),
      Job.list_json(REQLESS, popped, known, Worker.PUSHED, true))
    Events.publish('pushed', popped[1])
  end
end

-- The pickup: a put of a new job into a queue that some worker offers to take, before the
-- put writes the job. Returns the taker (nil: none, then no push at all) and whether the
-- pop Worker.push would run for it is sure to take exactly this job from nothing else than
-- its own fields: the queue is not paused, caps neither its concurrency nor its pop's
-- passes, holds no other waiting job nor any scheduled one, no recurring job nor rate limit,
-- and no lock of it has expired; and of the job's jid neither a history (then the put's
-- entry and the pop's go in one RPUSH) nor dependents nor dependencies exist (the pushed
-- object then asks after neither). Then Worker.hand_over does what that pop would have done,
-- without the work set's round (ZADD, ZREVRANGE, ZREM) and without reading the job back.
-- The caller knows (put's one EXISTS) that of the tracking set, the queue's throttle and its
-- offers only the offers may exist, that the queue is not grouped, and that the job is new
-- and has no dependency, no delay, no throttle nor rate limit of its own.
function Worker.pickup(now, queue, tid, jid)
  local worker = taker(now, queue)
  if worker == nil then return nil, false end
  Events.learn_tracked(false)
  Throttle.learn_unlimited(tid)
  if Config.number(queue .. '-max-pop-retry', Config.number('max-pop-retry')) <= 0
    or (REQLESS.max_concurrency and Config.number(queue .. '-max-concurrency', 0) > 0)
    or call('SISMEMBER', Keys.paused(), queue) == 1
    or call('EXISTS', Keys.queue(queue, 'work'), Keys.queue(queue, 'scheduled'),
      Keys.queue(queue, 'recur'), RateLimit.definition_key(tid), Keys.history(jid),
      Keys.dependents(jid), Keys.dependencies(jid)) > 0 then
    return worker, false
  end
  local expired = call('ZRANGEBYSCORE', Keys.queue(queue, 'locks'), '-inf', now, 'LIMIT', 0, 1)
  return worker, #expired == 0
end

-- What the pop of Worker.push writes and publishes when it takes the job a put has just
-- written (Worker.pickup said so), from the job's fields `f` (by Job.at's positions, as the
-- put wrote them: with the pop's state, worker, expires and attempt), its throttle list and
-- the put's history entry (which the put left to this, see History.first_two).
function Worker.hand_over(now, queue, worker, f, throttles, put_entry)
  local jid, at = f[Job.at.jid], Job.at
  local rates = RateLimit.begin(now)
  RateLimit.learn_none(rates, Keys.queue_throttle(queue))
  call('ZADD', Keys.workers(), now, worker)
  Throttle.try_acquire(jid, throttles, nil)
  History.first_two(jid, put_entry, History.pair_text(now, 'popped', 'worker', worker))
  Events.if_tracked('popped', jid)
  Queue.pop_end(now, queue, worker, f[at.expires], {jid}, {now - (tonumber(f[at.time]) or now)},
    rates, 1)
  Events.publish(push_channel(worker), '[' .. Job.json(REQLESS, jid, f, true, Worker.PUSHED,
    true) .. ']')
  Events.publish('pushed', jid)
end
