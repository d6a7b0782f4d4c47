-- Data model helpers shared by every module: the key prefix and key names, argument
-- parsing, JSON encoding rules, errors. Everything is local: Redis 7+ and Valkey make the
-- global environment read-only.

-- The namespaces of the domain modules, declared up front so that each module can call
-- functions that a later module defines.
local Job, Queue, Recurring, Worker = {}, {}, {}, {}

-- Texts worked out from one string (or number) alone, such as its JSON form: `memo(f)` is
-- f with the answers kept. A function library keeps them between calls; each table starts
-- afresh past MEMO_LIMIT entries, and texts over MEMO_KEY_LIMIT bytes are not kept. A Lua
-- string operation costs the server about as much as a command (string.find over a
-- 32-character jid ~8k instructions, a number written as text ~3k, a table lookup ~0.2k).
-- Nothing may change a table a memo returns.
local MEMO_LIMIT, MEMO_KEY_LIMIT = 1000, 256
local function memo(f)
  local known, size = {}, 0
  return function(key)
    local value = known[key]  -- (reading with nil or NaN is no error: nothing is found)
    if value ~= nil then return value end
    if key ~= key then return f(key) end  -- NaN: no table key
    -- long texts (a failure's message, a logged line) are rarely met twice: not kept
    if type(key) == 'string' and #key > MEMO_KEY_LIMIT then return f(key) end
    value = f(key)
    if size >= MEMO_LIMIT then known, size = {}, 0 end
    known[key] = value
    size = size + 1
    return value
  end
end

-- A whole number's text (a time's second, a day's bin), as Lua writes it, kept.
local integer_text = memo(function(n) return tostring(n) end)

-- The key prefix; api.lua replaces it when the caller passes one KEY ending in ':'.
local PREFIX = 'ql:'

local Keys = {}
function Keys.config() return PREFIX .. 'config' end
function Keys.queues() return PREFIX .. 'queues' end
function Keys.paused() return PREFIX .. 'paused_queues' end
-- A queue's keys, a worker's jobs key, a throttle's sets and a channel are made once and
-- kept (a pop or a call of many outcomes names the same few for each of its jobs), for the
-- prefix they were made with (api.lua forgets them when a call's prefix differs), for at
-- most MEMO_LIMIT queues, workers, throttles and channels in all.
Keys.made = {}
Keys.made_workers = {}
Keys.made_throttles = {}
Keys.made_channels = {}
Keys.made_count = 0
function Keys.forget_made()
  Keys.made, Keys.made_workers, Keys.made_throttles, Keys.made_count = {}, {}, {}, 0
  Keys.made_channels = {}
end
-- Keeps `value` under `name` in the table Keys[kind] (one of those above); returns it.
function Keys.remember(kind, name, value)
  if Keys.made_count >= MEMO_LIMIT then Keys.forget_made() end
  Keys.made_count = Keys.made_count + 1
  Keys[kind][name] = value
  return value
end
function Keys.queue(q, kind)
  local made = Keys.made[q]
  if made == nil then
    if q == nil or kind == nil then return PREFIX .. 'q:' .. q .. '-' .. kind end
    made = Keys.remember('made', q, {})
  end
  local key = made[kind]
  if key == nil then
    key = PREFIX .. 'q:' .. q .. '-' .. kind
    made[kind] = key
  end
  return key
end
function Keys.job(jid) return PREFIX .. 'j:' .. jid end
function Keys.history(jid) return PREFIX .. 'j:' .. jid .. '-history' end
-- a put's data written beside the script (Job.put's `staged` option)
function Keys.staged(jid) return PREFIX .. 'j:' .. jid .. '-staged' end
function Keys.dependencies(jid) return PREFIX .. 'j:' .. jid .. '-dependencies' end
function Keys.dependents(jid) return PREFIX .. 'j:' .. jid .. '-dependents' end
function Keys.recurring(jid) return PREFIX .. 'r:' .. jid end
-- set by the first flow.put (flows.lua): a cancel without it reads no job's flow fields
function Keys.flows() return PREFIX .. 'aqless:flows' end
function Keys.completed() return PREFIX .. 'completed' end
function Keys.tracked() return PREFIX .. 'tracked' end
function Keys.tag(tag) return PREFIX .. 't:' .. tag end
function Keys.tags() return PREFIX .. 'tags' end
function Keys.failures() return PREFIX .. 'failures' end
function Keys.failed(group) return PREFIX .. 'f:' .. group end
function Keys.workers() return PREFIX .. 'workers' end
function Keys.worker_jobs(worker)
  local key = Keys.made_workers[worker]
  if key ~= nil then return key end
  return Keys.remember('made_workers', worker, PREFIX .. 'w:' .. worker .. ':jobs')
end
function Keys.stats(kind, bin, q)
  return PREFIX .. 's:' .. kind .. ':' .. integer_text(bin) .. ':' .. q
end
-- aqless's own (no other client reads it): a queue's completed and failed jobs per minute
-- of the hour starting at `hour` (stats.lua's Stats.tick)
function Keys.throughput(hour, q)
  return PREFIX .. 'aqless:tp:' .. integer_text(hour) .. ':' .. q
end
-- aqless's own: the second of the last purge of completed jobs and the completions since
-- (lifecycle.lua's retain)
function Keys.retention() return PREFIX .. 'aqless:retention' end
function Keys.throttle(tid) return PREFIX .. 'th:' .. tid end
-- A throttle's locks or pending set (`suffix`: '-locks' or '-pending'), kept as Keys.queue's.
function Keys.throttle_set(tid, suffix)
  local made = Keys.made_throttles[tid]
  if made == nil then
    if tid == nil then return Keys.throttle(tid) .. suffix end
    made = Keys.remember('made_throttles', tid, {})
  end
  local key = made[suffix]
  if key == nil then
    key = Keys.throttle(tid) .. suffix
    made[suffix] = key
  end
  return key
end
function Keys.patterns(kind) return PREFIX .. 'qp:' .. kind end
-- aqless's own: the offers of idle workers to take a queue's next jobs (worker.lua)
function Keys.offers(q) return PREFIX .. 'offers:' .. q end
function Keys.channel(name)
  local key = Keys.made_channels[name]
  if key ~= nil then return key end
  return Keys.remember('made_channels', name, PREFIX .. name)
end
-- The throttle every job of a queue holds: its id is the queue's key stem.
function Keys.queue_throttle(q) return PREFIX .. 'q:' .. q end

-- The five sets of a queue that hold jobs (the recur set holds templates).
local QUEUE_SETS = {'work', 'locks', 'scheduled', 'depends', 'throttled'}

-- redis.call, taken when a call starts (api.lua): a function library is loaded where it is
-- not defined yet, and calling it directly spares a Lua call per command.
local call = nil

-- Errors: a string error, as the reference core raises them, so the reply reads
-- "ERR user_script:<line>: <text> script: ..." (user_function under FCALL): the shape every
-- qless client of the family parses (Ruby's CantCompleteError, PHP's areas...).
local function raise(message) error(message) end

local function check(condition, message)
  if not condition then raise(message) end
end

-- A finite number or nil. Lua's tonumber accepts 'nan' and 'inf'; the protocol must not
-- store them (they break sorted sets and JSON), so they count as "not a number".
local function number(value)
  local n = tonumber(value)
  if n == nil or n ~= n or n == math.huge or n == -math.huge then return nil end
  return n
end

-- A count, offset or retry budget as a whole number within what Redis takes as an integer
-- (floored; huge values are clamped rather than refused by the server halfway through).
local WHOLE_LIMIT = 2 ^ 53
local function whole(n)
  return math.max(-WHOLE_LIMIT, math.min(WHOLE_LIMIT, math.floor(n)))
end

-- Decodes a JSON argument. Malformed text raises the JSON library's error; a missing value
-- raises as well. Returns the decoded value (false for the JSON literal false).
local function decode(text)
  if text == nil then raise('JSON text expected, got nil') end
  return cjson.decode(text)
end

-- Decodes JSON that the script stored itself; nil when absent or empty.
local function decode_stored(text)
  if text == nil or text == false or text == '' then return nil end
  local ok, value = pcall(cjson.decode, text)
  if ok then return value end
  return nil
end

-- An array of strings (tags, jids, throttle ids) from a decoded JSON value, or nil.
local function string_list(value)
  if type(value) ~= 'table' then return nil end
  local list = {}
  for i = 1, #value do
    local item = value[i]
    if type(item) == 'number' then item = tostring(item) end
    if type(item) ~= 'string' then return nil end
    list[i] = item
  end
  return list
end

-- An optional numeric argument: `default` when absent, else its number, else the error
-- `text` followed by the value.
local function optional_number(value, default, text)
  if value == nil then return default end
  local n = number(value)
  check(n, text .. value)
  return n
end

-- An optional JSON list of strings, the same way.
local function optional_list(value, default, text)
  if value == nil then return default end
  local list = string_list(decode(value))
  check(list, text .. value)
  return list
end

-- cjson writes an empty table as {}. reqless replies write empty lists as [].
local function json_array(list)
  if #list == 0 then return '[]' end
  return cjson.encode(list)
end

-- A JSON value for event payloads and stored entries: exactly as cjson writes it (absent
-- values as false). cjson encodes a string faster than string.find could tell whether it
-- needs escaping.
local function json_value(value)
  if value == nil or value == false then return 'false' end
  return cjson.encode(value)
end

-- json_value of a name that recurs (a queue, a worker, a word), kept.
local json_name_kept = memo(function(name) return cjson.encode(name) end)
local function json_name(name)
  if name == nil or name == false then return 'false' end
  return json_name_kept(name)
end

-- Replies that hold job objects are concatenated as JSON text rather than built as tables
-- and encoded: each table or string a call makes costs the server about as much as a small
-- command. These helpers give exactly the JSON values cjson would write.
-- The characters of a JSON string for `s`, without the quotes: `s` itself when nothing in
-- it needs escaping.
-- (cjson also escapes /, which these leave as it is; cjson's length tells whether anything
-- needs escaping faster than string.find would.)
local function json_chars(s)
  local encoded = cjson.encode(s)
  if #encoded == #s + 2 or not string.find(s, '[%c"\\]') then return s end
  return string.sub(encoded, 2, -2)
end

-- json_chars of a name that recurs (a klass, a state, a queue, a worker), kept.
local name_chars = memo(json_chars)

-- A JSON string.
local function json_string(s)
  return '"' .. json_chars(s) .. '"'
end

-- A stored number (string or number), 0 when absent or not a number, to concatenate:
-- Lua writes numbers as cjson does (%.14g). cjson refuses NaN and infinities.
local function number_text(value)
  local n = tonumber(value) or 0
  if n ~= n or n == math.huge or n == -math.huge then return cjson.encode(n) end
  return tostring(n)
end
local number_text_kept = memo(number_text)
local function json_number(value)
  if not value then return '0' end
  return number_text_kept(value)
end

-- json_number of a stored number floored (a job's `remaining`).
local whole_text_kept = memo(function(value)
  return number_text(math.floor(tonumber(value) or 0))
end)
local function whole_text(value)
  if not value then return '0' end
  return whole_text_kept(value)
end

-- Stored JSON text (tags, throttles, failure) as cjson writes it once decoded, {} when
-- absent or malformed: the text itself when it is `[]`, `{}` (both written {}) or an array
-- of strings with nothing escaped, else decoded and encoded again.
local json_stored_kept = memo(function(text)
  if string.byte(text, 1) == 91 then  -- [
    local at = 2
    while true do
      local _, last = string.find(text, '^"[^"\\%c]*"', at)
      if last == nil then break end
      local after = string.byte(text, last + 1)
      if after == 93 then  -- ]
        if last + 1 == #text then return text end
        break
      end
      if after ~= 44 then break end  -- ,
      at = last + 2
    end
  end
  return cjson.encode(decode_stored(text) or {})
end)
local function json_stored(text)
  if text == nil or text == false or text == '' or text == '[]' or text == '{}' then
    return '{}'
  end
  return json_stored_kept(text)
end

-- A hash's fields by name (absent fields are nil).
local function read_hash(key, names)
  local values = call('HMGET', key, unpack(names))
  local result = {}
  for i, name in ipairs(names) do
    if values[i] ~= false then result[name] = values[i] end
  end
  return result
end

local function set_of(list)
  local set = {}
  for _, item in ipairs(list) do set[item] = true end
  return set
end

-- The items of `list` that are not in the set `removed`, in order.
local function without(list, removed)
  local kept = {}
  for _, item in ipairs(list) do
    if not removed[item] then kept[#kept + 1] = item end
  end
  return kept
end

local function contains(list, value)
  for _, item in ipairs(list) do
    if item == value then return true end
  end
  return false
end

-- An empty table for the many calls that have nothing to pass (a table made costs the
-- server about as much as a small command): nothing may change it.
local NOTHING = {}

-- Option pairs after the fixed arguments: name -> value, last one wins (NOTHING when there
-- are none: a caller that changes the options makes its own).
local function options(args, first)
  if args.n ~= nil and args.n < first then return NOTHING end
  local result = {}
  for i = first, #args, 2 do
    if args[i + 1] ~= nil then result[args[i]] = args[i + 1] end
  end
  return result
end

-- The day bin of a time (floored modulo, also for negative times).
local function day_bin(t)
  return t - (t % 86400)
end

-- Sorted-set score of a waiting job: higher priority first, then earlier insertion.
local function work_score(priority, t)
  return priority - (t / 10000000000)
end

-- Redis replies false for a missing hash field; this reads it as nil.
local function field(value)
  if value == false then return nil end
  return value
end

-- The arguments a[first..n] as a list.
local function rest(a, first)
  local list = {}
  for i = first, a.n do list[#list + 1] = a[i] end
  return list
end

-- `command key member...` for any number of members, in batches small enough for unpack.
local function call_batched(command, key, members)
  for i = 1, #members, 5000 do
    call(command, key, unpack(members, i, math.min(i + 4999, #members)))
  end
end

-- `ZADD key score member...` of every member with one score, batched the same way.
local function zadd_batched(key, score, members)
  if #members == 1 then
    call('ZADD', key, score, members[1])
    return
  end
  for i = 1, #members, 2500 do
    local args = {}
    for j = i, math.min(i + 2499, #members) do
      args[#args + 1] = score
      args[#args + 1] = members[j]
    end
    call('ZADD', key, unpack(args))
  end
end
