-- Batches (aqless's own): N member jobs tracked as one, with callback jobs put by the script
-- when a condition is met. Keys (none of them known to other qless clients):
--   ql:batch:<bid>          hash: description, created, ttl, total, pending, done, failed,
--                           finished (a time, once no member is pending), on_success,
--                           on_complete, on_death (the callbacks' specs, JSON), and
--                           fired_success|fired_complete|fired_death (the callback's jid,
--                           once put)
--   ql:batch:<bid>-members  hash: member jid -> pending | done | failed
--   ql:batches              sorted set: bid -> when it was made
--   ql:batches-expiring     sorted set: bid -> when a finished batch's keys expire
-- A member job carries its batch's id in the extra job-hash field `batch`. The paths that
-- end a job call Batch.ended once: complete (done), fail, a retry or lost lock with none
-- left, cancel (failed). A member's first end counts, once: a member put again afterwards
-- (unfail, requeue) is not counted again. Callbacks fire once each: on_death at the first
-- failed member, then, when no member is pending, on_success (none failed) and on_complete.
-- A finished batch's keys expire `ttl` seconds after it finished.

-- MEMBER_LIMIT: the most members one batch may have; KINDS: the callbacks, in firing order.
local Batch = {MEMBER_LIMIT = 10000, KINDS = {'death', 'success', 'complete'}}

function Batch.batch_key(bid) return PREFIX .. 'batch:' .. bid end
function Batch.members_key(bid) return PREFIX .. 'batch:' .. bid .. '-members' end
function Batch.index_key() return PREFIX .. 'batches' end
function Batch.expiring_key() return PREFIX .. 'batches-expiring' end

-- Drops from the index the batches whose keys have expired (at most 100 a call).
function Batch.prune(now)
  local gone = call('ZRANGEBYSCORE', Batch.expiring_key(), '-inf', now, 'LIMIT', 0, 100)
  if #gone == 0 then return end
  call_batched('ZREM', Batch.expiring_key(), gone)
  call_batched('ZREM', Batch.index_key(), gone)
end

-- A callback's spec from the JSON object of put's argument: {klass, queue, jid, data}.
function Batch.checked_callback(kind, spec)
  if spec == nil then return nil end
  check(type(spec) == 'table' and type(spec.klass) == 'string' and spec.klass ~= '' and
    type(spec.queue) == 'string' and spec.queue ~= '' and type(spec.jid) == 'string' and
    spec.jid ~= '' and (spec.data == nil or type(spec.data) == 'table'),
    'Batch(): callback "' .. kind .. '" needs a klass, a queue, a jid and object data')
  check(call('EXISTS', Keys.job(spec.jid)) == 0,
    'Batch(): callback jid already exists: ' .. spec.jid)
  return cjson.encode(spec)
end

-- The members' put arguments: after the count, each member is its number of arguments
-- followed by put's arguments (worker, queue, jid, klass, data, delay, [name, value]...).
-- Everything put would refuse is refused here, before anything is written.
function Batch.member_puts(a, first, count)
  local puts, seen, at = {}, {}, first
  for i = 1, count do
    local n = number(a[at])
    check(n and n >= 6 and n % 2 == 0, 'Batch(): member ' .. i .. ' has no put arguments')
    local put = {n = n}
    for k = 1, n do put[k] = a[at + k] end
    at = at + n + 1
    local jid = put[3]
    check(put[2] and put[2] ~= '', 'Queue(): no queue name provided')
    check(jid and jid ~= '', 'Put(): Arg "jid" missing')
    check(put[4] and put[4] ~= '', 'Put(): Arg "klass" missing')
    check(put[5] and pcall(cjson.decode, put[5]),
      'Put(): Arg "data" missing or not JSON: ' .. tostring(put[5]))
    check(number(put[6]), 'Put(): Arg "delay" not a number: ' .. tostring(put[6]))
    check(not seen[jid], 'Batch(): member jid given twice: ' .. jid)
    check(call('EXISTS', Keys.job(jid)) == 0, 'Batch(): member jid already exists: ' .. jid)
    seen[jid] = true
    puts[i] = put
  end
  check(at == a.n + 1, 'Batch(): arguments left after the members: ' .. (a.n + 1 - at))
  return puts
end

function Batch.put(now, a)
  local bid, description, ttl, count = a[1], a[2] or '', number(a[3]), number(a[5])
  check(bid and bid ~= '', 'Batch(): Arg "bid" missing')
  check(call('EXISTS', Batch.batch_key(bid)) == 0, 'Batch(): batch already exists: ' .. bid)
  check(ttl and ttl > 0, 'Batch(): Arg "ttl" not a positive number: ' .. tostring(a[3]))
  check(count and count >= 1 and count <= Batch.MEMBER_LIMIT and count == math.floor(count),
    'Batch(): Arg "count" not a number from 1 to 10000: ' .. tostring(a[5]))
  local callbacks = decode(a[4] or '{}')
  check(type(callbacks) == 'table',
    'Batch(): callback "all" needs a klass, a queue, a jid and object data')
  local specs = {}
  for _, kind in ipairs(Batch.KINDS) do specs[kind] = Batch.checked_callback(kind, callbacks[kind]) end
  local puts = Batch.member_puts(a, 6, count)

  Batch.prune(now)
  local key, members = Batch.batch_key(bid), Batch.members_key(bid)
  call('HSET', key, 'bid', bid, 'description', description, 'created', now, 'ttl', ttl,
    'total', count, 'pending', count, 'done', 0, 'failed', 0)
  for _, kind in ipairs(Batch.KINDS) do
    if specs[kind] then call('HSET', key, 'on_' .. kind, specs[kind]) end
  end
  call('ZADD', Batch.index_key(), now, bid)
  for _, put in ipairs(puts) do
    call('HSET', members, put[3], 'pending')
    local jid = Job.put(REQLESS, now, put)
    call('HSET', Keys.job(jid), 'batch', bid)
  end
  return bid
end

-- Puts the batch's `kind` callback, unless it has none or it was put already.
function Batch.fire(now, bid, kind, counts)
  local key = Batch.batch_key(bid)
  local v = call('HMGET', key, 'on_' .. kind, 'fired_' .. kind, 'description')
  if not v[1] or v[2] then return end
  local spec = cjson.decode(v[1])
  local data = spec.data
  if type(data) ~= 'table' then data = {} end
  data.batch = {id = bid, event = kind, description = v[3] or '', total = counts.total,
    pending = counts.pending, done = counts.done, failed = counts.failed}
  Job.put(REQLESS, now, {n = 6, '', spec.queue, spec.jid, spec.klass, cjson.encode(data), 0})
  call('HSET', key, 'fired_' .. kind, spec.jid)
end

-- A job ended (`outcome`: done or failed): counted on its batch, if it is a member still
-- pending; the callbacks whose condition that meets are put. Called once by each path that
-- ends a job (complete, fail, retry or lock loss with none left, cancel).
-- `bid`: the job's `batch` field when the caller read it already (false: none), else nil.
function Batch.ended(now, jid, outcome, bid)
  if bid == nil then bid = call('HGET', Keys.job(jid), 'batch') end
  if not bid then return end
  local key, members = Batch.batch_key(bid), Batch.members_key(bid)
  if call('HGET', members, jid) ~= 'pending' then return end
  call('HSET', members, jid, outcome)
  local pending = call('HINCRBY', key, 'pending', -1)
  call('HINCRBY', key, outcome, 1)
  local v = call('HMGET', key, 'total', 'done', 'failed', 'ttl')
  local counts = {total = tonumber(v[1]) or 0, pending = pending, done = tonumber(v[2]) or 0,
    failed = tonumber(v[3]) or 0}
  if outcome == 'failed' and counts.failed == 1 then Batch.fire(now, bid, 'death', counts) end
  if pending > 0 then return end
  if counts.failed == 0 then Batch.fire(now, bid, 'success', counts) end
  Batch.fire(now, bid, 'complete', counts)
  local ttl = tonumber(v[4]) or 86400
  call('HSET', key, 'finished', now)
  local ms = math.max(1, math.floor(ttl * 1000))
  call('PEXPIRE', key, ms)
  call('PEXPIRE', members, ms)
  call('ZADD', Batch.expiring_key(), now + ttl, bid)
end

-- A batch's record as a JSON object, or nil when there is none.
function Batch.batch_json(now, bid)
  local v = call('HMGET', Batch.batch_key(bid), 'description', 'created', 'ttl', 'total', 'pending',
    'done', 'failed', 'finished', 'on_success', 'on_complete', 'on_death', 'fired_success',
    'fired_complete', 'fired_death')
  if not v[4] then return nil end
  local callbacks = {}
  for i, kind in ipairs({'success', 'complete', 'death'}) do
    local spec = decode_stored(v[8 + i])
    if spec ~= nil then
      callbacks[#callbacks + 1] = '"' .. kind .. '":{"klass":' .. json_string(spec.klass) ..
        ',"queue":' .. json_string(spec.queue) .. ',"jid":' .. json_string(spec.jid) ..
        ',"fired":' .. tostring(v[11 + i] ~= false) .. '}'
    end
  end
  local finished = 'null'
  local expires = 'null'
  if v[8] then
    finished = json_number(v[8])
    expires = json_number(tonumber(v[8]) + (tonumber(v[3]) or 0))
  end
  return '{"id":' .. json_string(bid) .. ',"description":' .. json_string(v[1] or '') ..
    ',"created":' .. json_number(v[2]) .. ',"ttl":' .. json_number(v[3]) ..
    ',"total":' .. json_number(v[4]) .. ',"pending":' .. json_number(v[5]) ..
    ',"done":' .. json_number(v[6]) .. ',"failed":' .. json_number(v[7]) ..
    ',"finished":' .. finished .. ',"expires":' .. expires ..
    ',"callbacks":{' .. table.concat(callbacks, ',') .. '}}'
end

function Batch.get(now, bid)
  check(bid and bid ~= '', 'Batch(): Arg "bid" missing')
  return Batch.batch_json(now, bid)
end

function Batch.list(now, offset, count)
  local first = whole(optional_number(offset, 0, 'Batch(): Arg "offset" not a number: '))
  local n = whole(optional_number(count, 25, 'Batch(): Arg "count" not a number: '))
  Batch.prune(now)
  local parts = {}
  if n > 0 then
    for _, bid in ipairs(call('ZREVRANGE', Batch.index_key(), first, first + n - 1)) do
      local record = Batch.batch_json(now, bid)
      if record ~= nil then parts[#parts + 1] = record end
    end
  end
  return '{"total":' .. call('ZCARD', Batch.index_key()) .. ',"batches":[' ..
    table.concat(parts, ',') .. ']}'
end
