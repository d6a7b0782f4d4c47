-- Throttles: named concurrency limits. ql:th:<tid> holds the maximum (0 = unlimited),
-- ql:th:<tid>-locks the jids holding a slot, ql:th:<tid>-pending the jids waiting for one.
-- Every job also holds its queue's throttle, whose id is ql:q:<queue>.

local Throttle = {}

local function locks_key(tid) return Keys.throttle_set(tid, '-locks') end
local function pending_key(tid) return Keys.throttle_set(tid, '-pending') end

-- Maximums read during this call (throttle.set and throttle.delete forget theirs); made
-- when a call first needs one.
local maximums = nil

function Throttle.forget() maximums = nil end

function Throttle.maximum(tid)
  if maximums == nil then maximums = {} end
  if maximums[tid] == nil then
    maximums[tid] = number(call('HGET', Keys.throttle(tid), 'maximum')) or 0
  end
  return maximums[tid]
end

-- What a caller learnt of a throttle (Job.put's probe): its hash does not exist, so it has
-- no maximum.
function Throttle.learn_unlimited(tid)
  if maximums == nil then maximums = {} end
  maximums[tid] = 0
end

-- The pending set of a job's only throttle, from its list (Throttle.parse); nil for several
-- or none.
function Throttle.sole_pending(throttles)
  if #throttles ~= 1 then return nil end
  return pending_key(throttles[1])
end

-- 0 means unlimited; a negative maximum (stored before throttle.set refused one) admits no
-- one (as the reference).
-- (A count of the locks first writes the removals from them a folding call left for its
-- flush: Throttle.release.)
function Throttle.available(tid)
  local maximum = Throttle.maximum(tid)
  if maximum == 0 then return true end
  Stats.settle(locks_key(tid))
  return call('ZCARD', locks_key(tid)) < maximum
end

local function free_slots(tid)
  local maximum = Throttle.maximum(tid)
  if maximum == 0 then return 10 end
  Stats.settle(locks_key(tid))
  return math.floor(maximum - call('ZCARD', locks_key(tid)))
end

-- The throttle list of a job or template (stored JSON text; absent means none). Lists are
-- kept by their text (memo): nothing may change one.
local parse_kept = memo(function(text)
  -- the usual list, the queue's throttle alone, read without decoding
  local one = string.match(text, '^%["([^"\\%c]*)"%]$')
  if one then return {one} end
  return string_list(decode_stored(text)) or {}
end)
function Throttle.parse(text)
  if type(text) ~= 'string' then return NOTHING end
  return parse_kept(text)
end

-- The list a put or recur stores: the given ids minus the old queue's own throttle (the
-- reference scans forwards while removing, so an entry right after a removed one stays),
-- then the new queue's throttle.
-- (The usual list, the queue's throttle alone, is kept: nothing may change a list this
-- returns.)
local queue_throttle_only = memo(function(stem) return {stem} end)
function Throttle.list_for(given, old_stem, queue)
  if #given == 0 then return queue_throttle_only(Keys.queue_throttle(queue)) end
  local list = {}
  for i, tid in ipairs(given) do list[i] = tid end
  if old_stem ~= nil then
    local i = 1
    while i <= #list do
      if list[i] == old_stem then table.remove(list, i) end
      i = i + 1
    end
  end
  list[#list + 1] = Keys.queue_throttle(queue)
  return list
end

-- The first throttle of the list without a free slot, or nil.
function Throttle.first_unavailable(throttles)
  for _, tid in ipairs(throttles) do
    if not Throttle.available(tid) then return tid end
  end
  return nil
end

-- Takes a slot on every throttle, or on none when one is full. With `unlimited` given,
-- slots on unlimited throttles (whose locks nothing counts) are only noted there, in order,
-- for Throttle.add_locks to add together: its list holds the throttle ids, tid -> jids.
function Throttle.try_acquire(jid, throttles, unlimited)
  if Throttle.first_unavailable(throttles) ~= nil then return false end
  for _, tid in ipairs(throttles) do
    if unlimited ~= nil and Throttle.maximum(tid) == 0 then
      local jids = unlimited[tid]
      if jids == nil then
        jids = {}
        unlimited[tid] = jids
        unlimited[#unlimited + 1] = tid
      end
      jids[#jids + 1] = jid
    else
      call('ZADD', locks_key(tid), 1, jid)
    end
  end
  return true
end

function Throttle.add_locks(unlimited)
  for _, tid in ipairs(unlimited) do zadd_batched(locks_key(tid), 1, unlimited[tid]) end
end

-- Parks a job that could not get its throttles: state `throttled`, in the queue's
-- throttled set and in the pending set of the first full throttle.
function Throttle.park(queue, jid, throttles, state, now)
  Job.unrelated = nil
  local tid = Throttle.first_unavailable(throttles)
  if tid ~= nil then call('ZADD', pending_key(tid), now, jid) end
  call('ZADD', Keys.queue(queue, 'throttled'), now, jid)
  if state ~= 'throttled' then
    call('HSET', Keys.job(jid), 'state', 'throttled')
    History.pair(jid, now, 'throttled', 'queue', queue)
  end
end

-- Frees the job's slot (or its place in line) and moves as many pending jobs back to
-- their queue's work set as there are free slots. Moved jobs acquire at their next pop.
-- `none_pending`: the caller knows the pending set does not exist; then, while a call's
-- outcomes are folded, the slot is freed at the flush (Stats.remove: only a pop adds to the
-- locks, and a count of them settles first).
function Throttle.release(tid, jid, now, none_pending)
  if none_pending and Stats.folded then return Stats.remove(locks_key(tid), jid) end
  if call('ZREM', locks_key(tid), jid) == 0 then call('ZREM', pending_key(tid), jid) end
  if none_pending or call('ZCARD', pending_key(tid)) == 0 then return end
  local slots = free_slots(tid)
  if slots < 1 then return end
  local waiting = call('ZRANGE', pending_key(tid), 0, slots - 1)
  for _, pending in ipairs(waiting) do
    local job = Job.read(pending, {'queue', 'priority', 'held_in'})
    local queue = Job.home(job, pending)
    if queue ~= nil and queue ~= '' then
      call('ZREM', Keys.queue(queue, 'throttled'), pending)
      local score = work_score(tonumber(job.priority) or 0, now)
      call('ZADD', Keys.queue(queue, 'work'), score, pending)
      Groups.enter(queue, pending, score)
    end
  end
  call('ZREMRANGEBYRANK', pending_key(tid), 0, #waiting - 1)
end

-- Takes the job out of the pending set of every throttle in its stored list (a parked job
-- waits in one of them). Its locks stay.
function Throttle.leave_lines(jid, stored)
  for _, tid in ipairs(Throttle.parse(stored)) do call('ZREM', pending_key(tid), jid) end
end

-- release-all: every throttle in the job's stored list, in order (`stored`: the list's
-- text when the caller has already read it; `none_pending`: the caller knows that the
-- pending set of the list's only throttle does not exist, see Throttle.sole_pending).
function Throttle.release_all(jid, now, stored, none_pending)
  if stored == nil then stored = call('HGET', Keys.job(jid), 'throttles') end
  Throttle.release_list(jid, now, Throttle.parse(stored), none_pending)
end

-- The same, given the list parsed (Throttle.parse).
function Throttle.release_list(jid, now, throttles, none_pending)
  for i = 1, #throttles do Throttle.release(throttles[i], jid, now, none_pending) end
end

function Throttle.set(tid, maximum, expiration)
  if maximums ~= nil then maximums[tid] = nil end
  call('HSET', Keys.throttle(tid), 'id', tid, 'maximum', maximum)
  if expiration > 0 then call('EXPIRE', Keys.throttle(tid), expiration) end
end

function Throttle.info(tid)
  return {id = tid, maximum = Throttle.maximum(tid), ttl = call('TTL', Keys.throttle(tid))}
end

function Throttle.locks(tid) return call('ZRANGE', locks_key(tid), 0, -1) end
function Throttle.pending(tid) return call('ZRANGE', pending_key(tid), 0, -1) end
function Throttle.delete(tid)
  if maximums ~= nil then maximums[tid] = nil end
  call('DEL', Keys.throttle(tid))
end
