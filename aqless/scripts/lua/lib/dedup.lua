-- Deduplication (aqless's own): a put that names a dedup id puts a job only when no job holds
-- that id. ql:dedup:<id> holds the jid that does; the job's `dedup` field names its id, so
-- the paths that end a job (complete, fail, cancel) can let the id go.
--   job:      the id is held until the job ends (completes, fails or is cancelled);
--   ttl:      the id is held for ttl seconds, whatever becomes of the job;
--   debounce: the id is held for ttl seconds from the latest put; a put meanwhile replaces
--             the pending job's data and delay (the last data wins); if the job has started
--             or ended, the put makes a new job, which then holds the id.

local Dedup = {}

local DEDUP_MODES = {job = true, ttl = true, debounce = true}
-- the states in which a job has not started: a debounced put may still replace it
local DEDUP_PENDING = {waiting = true, scheduled = true, depends = true, throttled = true}
-- the states of a job that has ended
local DEDUP_ENDED = {complete = true, failed = true}

local function dedup_key(id) return PREFIX .. 'dedup:' .. id end

-- The put to make: `a` without the three dedup arguments in front.
local function put_arguments(a)
  local put = {n = a.n - 3}
  for i = 4, a.n do put[i - 3] = a[i] end
  return put
end

local function hold(key, jid, mode, ttl)
  if mode == 'job' then
    call('SET', key, jid)
  else
    call('SET', key, jid, 'PX', math.max(1, math.floor(ttl * 1000)))
  end
end

-- args: id, mode, ttl, then put's arguments. Reply: {jid, 'put' | 'deduplicated' |
-- 'debounced'}; the jid is the job that holds the id after the call. A deduplicated put
-- writes nothing, so put's own checks of its arguments run only when it puts (Job.put).
function Dedup.put(D, now, a)
  local id, mode, ttl = a[1], a[2], number(a[3])
  check(id and id ~= '', 'Dedup(): Arg "id" missing')
  check(DEDUP_MODES[mode], 'Dedup(): Arg "mode" must be job, ttl or debounce: ' .. tostring(mode))
  check(ttl and (mode == 'job' or ttl > 0),
    'Dedup(): Arg "ttl" not a positive number: ' .. tostring(a[3]))
  local put = put_arguments(a)
  check(put[2], 'Queue(): no queue name provided')
  local key = dedup_key(id)
  local holder = call('GET', key)
  local state = false
  if holder and mode ~= 'ttl' then state = call('HGET', Keys.job(holder), 'state') end
  local outcome = 'put'
  -- a ttl's id is held for as long as its key lives; the others' by a job that has not ended
  if holder and (mode == 'ttl' or (state and not DEDUP_ENDED[state])) then
    if mode ~= 'debounce' then
      Events.publish('log', '{"jid":' .. json_value(holder) ..
        ',"event":"deduplicated","queue":' .. json_value(put[2]) ..
        ',"dedup":' .. json_value(id) .. '}')
      return {holder, 'deduplicated'}
    end
    if DEDUP_PENDING[state] then
      put[3], outcome = holder, 'debounced'
    end
  end
  local jid = Job.put(D, now, put)
  call('HSET', Keys.job(jid), 'dedup', id)
  hold(key, jid, mode, ttl)
  if outcome == 'debounced' then
    Events.publish('log', '{"jid":' .. json_value(jid) ..
      ',"event":"debounced","queue":' .. json_value(put[2]) ..
      ',"dedup":' .. json_value(id) .. '}')
  end
  return {jid, outcome}
end

-- A job ends: the id it holds until then is free again (a ttl's stays until it expires).
-- `id`: the job's `dedup` field, read by the caller with the rest (most jobs have none).
-- The dedup id the job was put with, or nil.
function Dedup.id_of(jid)
  check(jid, 'Job(): no jid provided')
  return call('HGET', Keys.job(jid), 'dedup') or nil
end

function Dedup.release(jid, id)
  if id == nil then return end
  local key = dedup_key(id)
  if call('GET', key) == jid and call('PTTL', key) == -1 then call('DEL', key) end
end
