-- Per-day statistics: wait and run times (running mean, Welford variance, histogram) and
-- the failures/failed/retries counters of ql:s:stats:<bin>:<queue>; and aqless's own
-- completed and failed jobs per minute (ql:aqless:tp:<hour>:<queue>).

local Stats = {}

-- The histogram field of a sample (by whole seconds, kept).
local histogram_field_kept = memo(function(v)
  if v < 60 then return 's' .. v end
  if v < 3600 then return 'm' .. math.floor(v / 60) end
  if v < 86400 then return 'h' .. math.floor(v / 3600) end
  return 'd' .. math.floor(v / 86400)
end)
local function histogram_field(value) return histogram_field_kept(math.floor(value)) end

-- Welford's running count, mean and variance sum after one more sample.
local function welford(total, mean, vk, value)
  if total == nil then return 1, value, 0 end
  local old = mean
  total = total + 1
  mean = mean + (value - mean) / total
  return total, mean, vk + (value - mean) * (value - old)
end

-- STAT for one sample: one read of the summary and the sample's bucket, one write.
function Stats.record_one(queue, kind, now, value)
  local folded = Stats.folded
  if folded then
    local day = day_bin(now)
    local by_day = Stats.found(folded.days, kind, queue)
    local entry = by_day[day]
    if entry == nil then
      entry = Stats.folded_entry(Keys.stats(kind, day, queue), 'samples', queue, kind, now)
      by_day[day] = entry
    end
    entry.samples[#entry.samples + 1] = value
    return
  end
  local key = Keys.stats(kind, day_bin(now), queue)
  local bucket = histogram_field(value)
  local current = call('HMGET', key, 'total', 'mean', 'vk', bucket)
  local total, mean, vk = welford(tonumber(current[1]), tonumber(current[2]),
    tonumber(current[3]), value)
  call('HSET', key, 'total', total, 'mean', mean, 'vk', vk,
    bucket, (tonumber(current[4]) or 0) + 1)
end

-- STAT for several samples at once (a pop records one wait sample per job): one read of
-- the summary and the samples' buckets, one write.
function Stats.record(queue, kind, now, samples)
  if #samples == 0 then return end
  if #samples == 1 then return Stats.record_one(queue, kind, now, samples[1]) end
  local key = Keys.stats(kind, day_bin(now), queue)
  local fields = {'total', 'mean', 'vk'}
  local added = {}
  local second, bucket = nil, nil  -- (the last sample's: samples come in runs of a second)
  for i = 1, #samples do  -- (numeric loops: ipairs costs a call per step)
    local whole_seconds = math.floor(samples[i])
    if whole_seconds ~= second then
      second, bucket = whole_seconds, histogram_field_kept(whole_seconds)
    end
    local count = added[bucket]
    if count == nil then
      count = 0
      fields[#fields + 1] = bucket
    end
    added[bucket] = count + 1
  end
  local current = call('HMGET', key, unpack(fields))
  local total, mean, vk = tonumber(current[1]), tonumber(current[2]), tonumber(current[3])
  local first = 1
  if total == nil then total, mean, vk, first = 1, samples[1], 0, 2 end
  for i = first, #samples do  -- (welford's steps, written out: a call costs more)
    local value, old = samples[i], mean
    total = total + 1
    mean = mean + (value - mean) / total
    vk = vk + (value - mean) * (value - old)
  end
  local writes = {'total', total, 'mean', mean, 'vk', vk}
  for i = 4, #fields do
    writes[#writes + 1] = fields[i]
    writes[#writes + 1] = (tonumber(current[i]) or 0) + added[fields[i]]
  end
  call('HSET', key, unpack(writes))
end

-- THROUGHPUT (aqless's own): one more completed ('c') or failed ('f') job of `queue` in the
-- minute of `now`, in the hash of its hour (ql:aqless:tp:<hour>:<q>, fields c<minute> and
-- f<minute>, minute 0-59). Its first count sets it to expire 25 hours after its hour began
-- (EXPIRE, relative to the server's clock as throttles' expirations are; EXPIREAT would
-- need a command the documented ACL users lack): at most 26 hashes of at most 120 small
-- fields per queue, one HINCRBY a job.
function Stats.tick(queue, now, kind)
  local offset = now % 3600
  local folded = Stats.folded
  if folded then
    local minute = math.floor(offset / 60)
    local by_minute = Stats.found(folded.minutes, kind, queue, now - offset)
    local entry = by_minute[minute]
    if entry == nil then
      local key, field = Keys.throughput(now - offset, queue), kind .. minute
      entry = Stats.folded_entry(key .. ' ' .. field, 'tick', key, field, offset)
      by_minute[minute] = entry
    end
    entry.delta = entry.delta + 1
    return
  end
  local key = Keys.throughput(now - offset, queue)
  local field = kind .. math.floor(offset / 60)
  if call('HINCRBY', key, field, 1) == 1 then
    call('EXPIRE', key, 90000 - math.floor(offset))
  end
end

-- PER CLASS (aqless's own): in the hash THROUGHPUT keeps (made, and set to expire, by the
-- Stats.tick just before), a job class's completions of the hour by run time, '<klass>|r<i>'
-- counting runs of at most 2^(i/2) ms (i >= 0; a run of 1 ms or less counts in 0: their
-- sum is the class's completed jobs), and its failed jobs, '<klass>|f'. One HINCRBY a
-- completion or failure; a job without a class counts in none.
function Stats.by_class(queue, now, klass, seconds)
  if not klass or klass == '' then return end
  local bucket = -1  -- (failed)
  if seconds ~= nil then
    bucket = 0
    -- (math.log(2), written out: a call costs the server more than the constant)
    if seconds > 0.001 then
      bucket = math.ceil(2 * math.log(seconds * 1000) / 0.6931471805599453)
    end
  end
  local folded, hour = Stats.folded, now - now % 3600
  local by_bucket = folded and Stats.found(folded.classes, klass, queue, hour)
  local entry = by_bucket and by_bucket[bucket]
  if entry == nil then
    local key, field = Keys.throughput(hour, queue), klass .. '|f'
    if bucket >= 0 then field = klass .. '|r' .. bucket end
    if not folded then return call('HINCRBY', key, field, 1) end
    -- (after the tick's entry, met first: the hash's expiry is set)
    entry = Stats.folded_entry(key .. ' ' .. field, 'count', key, field)
    by_bucket[bucket] = entry
  end
  entry.delta = entry.delta + 1
end

function Stats.count(queue, at, counters, klass)
  local key = Keys.stats('stats', day_bin(at), queue)
  for name, delta in pairs(counters) do
    if Stats.folded then
      local entry = Stats.folded_entry(key .. ' ' .. name, 'count', key, name)
      entry.delta = entry.delta + delta
    else
      call('HINCRBY', key, name, delta)
    end
  end
  if counters.failed == 1 then
    Stats.tick(queue, at, 'f')
    Stats.by_class(queue, at, klass)
  end
end

-- Folding (aqless's own, jobs.outcomes: docs/protocol/CORE.md 5.8): between Stats.fold and
-- Stats.flush, the samples, counters and ticks of a call's outcomes are gathered rather than
-- written, by key (and field), in the order first met; the flush writes each once: a queue's
-- day of run samples as Stats.record does (one read, one write, the same running arithmetic
-- sample by sample), a counter with one HINCRBY of its sum, a minute's tick with one HINCRBY
-- of its count, setting the hour's expiry when that count made the field, as the tick that
-- made it would have (from that tick's offset).
function Stats.fold()
  Stats.folded = {order = {}, z = {}, days = {}, minutes = {}, classes = {}, finished = {}}
end

-- While folding, an entry is found by the values it is made of rather than by its id, a
-- text made for each outcome: Stats.found(folded.<kind>, a, b[, c]) is the table of the
-- entries made of a, b (and c), by the last value.
function Stats.found(t, a, b, c)
  local by_a = t[a]
  if by_a == nil then
    by_a = {}
    t[a] = by_a
  end
  local found = by_a[b]
  if found == nil then
    found = {}
    by_a[b] = found
  end
  if c == nil then return found end
  local by_c = found[c]
  if by_c == nil then
    by_c = {}
    found[c] = by_c
  end
  return by_c
end

function Stats.folded_entry(id, what, a, b, c)
  local folded = Stats.folded
  local entry = folded[id]
  if entry == nil then
    entry = {what = what, a, b, c, delta = 0, samples = {}}
    folded[id] = entry
    folded.order[#folded.order + 1] = entry
  end
  return entry
end

-- ZREM `member` from `key`: a lock set (a queue's, a throttle's) or a worker's jobs (only a
-- pop or a heartbeat adds to those, and neither runs among a call's outcomes), or the work
-- and scheduled sets a finished job leaves (Job.leave_running; while folding, the three sets
-- of its queue as one entry: Stats.remove_finished). While folding, one ZREM per
-- set at the flush, before the call's pop; removing twice is removing once. A count of a
-- throttle's locks among the outcomes (a put's, a release's) settles its set first.
function Stats.remove(key, member)
  local folded = Stats.folded
  if not folded then return call('ZREM', key, member) end
  local entry = folded.z[key]
  if entry == nil then
    entry = Stats.folded_entry('z ' .. key, 'zrem', key)
    folded.z[key] = entry
  end
  entry.samples[#entry.samples + 1] = member
end

-- Stats.remove of a finished job from its queue's work, scheduled and locks sets
-- (Job.leave_running), while folding: one entry for the three.
function Stats.remove_finished(queue, member)
  local folded = Stats.folded
  local entry = folded.finished[queue]
  if entry == nil then
    entry = Stats.folded_entry('f ' .. queue, 'finished', queue)
    folded.finished[queue] = entry
  end
  local samples = entry.samples
  samples[#samples + 1] = member
end

-- The removals from `key` left for the flush, written now.
function Stats.settle(key)
  local entry = Stats.folded and Stats.folded['z ' .. key]
  if entry and #entry.samples > 0 then
    call('ZREM', key, unpack(entry.samples))
    entry.samples = {}
  end
end

function Stats.flush()
  local folded = Stats.folded
  Stats.folded = nil
  for _, entry in ipairs(folded.order) do
    if entry.what == 'samples' then
      Stats.record(entry[1], entry[2], entry[3], entry.samples)
    elseif entry.what == 'zrem' then
      if #entry.samples > 0 then call_batched('ZREM', entry[1], entry.samples) end
    elseif entry.what == 'finished' then
      call_batched('ZREM', Keys.queue(entry[1], 'work'), entry.samples)
      call_batched('ZREM', Keys.queue(entry[1], 'scheduled'), entry.samples)
      call_batched('ZREM', Keys.queue(entry[1], 'locks'), entry.samples)
    elseif entry.what == 'count' then
      call('HINCRBY', entry[1], entry[2], entry.delta)
    elseif entry.what == 'retain' then
      Job.retention_flush(entry[1], entry[2], entry[3], entry.delta, entry.now,
        entry.samples)
    elseif call('HINCRBY', entry[1], entry[2], entry.delta) == entry.delta then
      call('EXPIRE', entry[1], 90000 - math.floor(entry[3]))
    end
  end
end

local function summary(key)
  local flat = call('HGETALL', key)
  local fields = {}
  for i = 1, #flat, 2 do fields[flat[i]] = flat[i + 1] end
  local count = tonumber(fields.total) or 0
  local mean = tonumber(fields.mean) or 0
  local std = 0
  if count > 1 then std = math.sqrt((tonumber(fields.vk) or 0) / (count - 1)) end
  local histogram = {}
  local function add(prefix, first, last)
    for i = first, last do histogram[#histogram + 1] = tonumber(fields[prefix .. i]) or 0 end
  end
  add('s', 0, 59)
  add('m', 1, 59)
  add('h', 1, 23)
  add('d', 1, 6)
  return {count = count, mean = mean, std = std, histogram = histogram}
end

-- The stats object of a queue for the day of `date`.
function Stats.of_day(queue, date)
  local bin = day_bin(date)
  local counters = call('HMGET', Keys.stats('stats', bin, queue), 'retries', 'failed', 'failures')
  return {
    retries = tonumber(counters[1]) or 0,
    failed = tonumber(counters[2]) or 0,
    failures = tonumber(counters[3]) or 0,
    wait = summary(Keys.stats('wait', bin, queue)),
    run = summary(Keys.stats('run', bin, queue)),
  }
end
