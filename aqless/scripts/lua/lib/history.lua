-- Job history: ql:j:<jid>-history holds JSON arrays [when, what] or [when, what, item].

local History = {}

-- Appends an entry, keeping the first entry and at most `max-job-history` entries in all.
-- Up to two entries every limit keeps them all, so the configuration is read only beyond.
-- `entry`: the entry's JSON text, as cjson writes {when, what[, item]}.
local function push(jid, entry)
  local key = Keys.history(jid)
  local length = call('RPUSH', key, entry)
  if length <= 2 then return end
  local max = Config.number('max-job-history')
  if max == 1 then
    -- the reference's trimming (pop the first, LTRIM from 1, push the first back, append)
    -- drops the second entry; a limit of 2 never trims
    local first = call('LPOP', key)
    call('LPOP', key)
    call('LPUSH', key, first)
  elseif max > 2 and length > max then
    -- same result as the reference for max >= 3
    local first = call('LPOP', key)
    call('LTRIM', key, 1 - max, -1)
    call('LPUSH', key, first)
  end
end

-- An entry [when, what] or [when, what, item] as cjson writes it. Without an item, or with
-- one pair `key` = `value` (History.pair), it is concatenated: Lua writes a number as
-- cjson does (%.14g), json_value a string.
function History.append(jid, now, what, item)
  if item == nil then
    push(jid, '[' .. integer_text(math.floor(now)) .. ',' .. json_name(what) .. ']')
  else
    push(jid, cjson.encode({math.floor(now), what, item}))
  end
end

-- A `done` entry (complete's), its text kept by second: the completes of a call of many
-- outcomes mostly write the same one.
History.done_text = memo(function(second)
  return '[' .. integer_text(second) .. ',"done"]'
end)
function History.done(jid, now) push(jid, History.done_text(math.floor(now))) end

-- An entry whose item is one pair; `what` and `key` are words of this script.
function History.pair(jid, now, what, key, value)
  if value == nil then return History.append(jid, now, what, {}) end
  push(jid, History.pair_text(now, what, key, value))
end

-- The text of such an entry (a pop writes the same one for each of its jobs).
function History.pair_text(now, what, key, value)
  return '[' .. integer_text(math.floor(now)) .. ',"' .. what .. '",{"' .. key .. '":' ..
    json_name(value) .. '}]'
end

-- Appends an entry's text (History.pair_text).
function History.push(jid, entry) push(jid, entry) end

-- A `put` entry; its item key is the writer's vocabulary's ({q} or {queue}). The last text
-- made is kept with what made it (the second, the key, the queue): puts come in runs into
-- one queue within a second.
History.last_put = {}
function History.put_text(D, now, queue)
  local second, key, last = math.floor(now), D.history_queue, History.last_put
  if last[1] ~= second or last[2] ~= key or last[3] ~= queue then
    last[1], last[2], last[3] = second, key, queue
    last[4] = History.pair_text(now, 'put', key, queue)
  end
  return last[4]
end
function History.put(D, jid, now, queue)
  local last = History.last_put
  if last[3] == queue and queue ~= nil and last[1] == math.floor(now)
    and last[2] == D.history_queue then
    return push(jid, last[4])  -- (the run's text without a call to make it)
  end
  if queue == nil then return History.pair(jid, now, 'put', D.history_queue, queue) end
  push(jid, History.put_text(D, now, queue))
end

-- The first two entries of a job whose history does not exist (a put picked up at once,
-- Worker.hand_over): one RPUSH, as two pushes leave them (no limit trims two).
function History.first_two(jid, first, second)
  call('RPUSH', Keys.history(jid), first, second)
end

-- A stored entry as presented: its item with `when` and `what` added. A put entry names its
-- queue in the reader's vocabulary, whichever vocabulary wrote it.
local function presented(D, text)
  local entry = decode_stored(text) or {}
  local item = entry[3]
  if type(item) ~= 'table' then item = {} end
  item.when = entry[1]
  item.what = entry[2]
  if item.what == 'put' then
    local queue = item.q or item.queue
    item.q, item.queue = nil, nil
    item[D.history_queue] = queue
  end
  return item
end

-- The JSON text of a stored entry as presented. The entries this script writes
-- (`[when,"what"]` or `[when,"what",{"key":"value"}]`, two pairs at most, as cjson writes
-- them: a whole positive time of 14 digits at most, word-like what and keys, string values
-- with nothing escaped) are rewritten as text; anything else is decoded and encoded.
local function entry_json(D, text)
  if string.byte(text, -2) ~= 125 then  -- no item: [when,"what"]
    local when, what = string.match(text, '^%[([1-9]%d*),"([%w_%-]*)"%]$')
    if when ~= nil and #when <= 14 then
      return '{"when":' .. when .. ',"what":"' .. what .. '"}'
    end
    return cjson.encode(presented(D, text))
  end
  local when, what, key, value =
    string.match(text, '^%[([1-9]%d*),"([%w_%-]*)",{"([%w_]+)":("[^"\\%c]*")}%]$')
  if when ~= nil and #when <= 14 and key ~= 'when' and key ~= 'what' then
    if what == 'put' and (key == 'q' or key == 'queue') then key = D.history_queue end
    return '{"' .. key .. '":' .. value .. ',"when":' .. when .. ',"what":"' .. what .. '"}'
  end
  local pairs_text, other
  when, what, pairs_text, key, other = string.match(text,
    '^%[([1-9]%d*),"([%w_%-]*)",{("([%w_]+)":"[^"\\%c]*","([%w_]+)":"[^"\\%c]*")}%]$')
  if when ~= nil and #when <= 14 and what ~= 'put' and key ~= other and key ~= 'when' and
      key ~= 'what' and other ~= 'when' and other ~= 'what' then
    return '{' .. pairs_text .. ',"when":' .. when .. ',"what":"' .. what .. '"}'
  end
  return cjson.encode(presented(D, text))
end

-- entry_json by vocabulary, kept: the entries of jobs put in the same second, or popped
-- together, are the same text.
local entry_memos = {}
local function entry_json_kept(D)
  local kept = entry_memos[D]
  if kept == nil then
    kept = memo(function(text) return entry_json(D, text) end)
    entry_memos[D] = kept
  end
  return kept
end

-- The presented history as JSON text: one object per entry ({} when there is none, as
-- cjson writes an empty list).
function History.json(D, jid)
  local entries = call('LRANGE', Keys.history(jid), 0, -1)
  if #entries == 0 then return '{}' end
  local presented = entry_json_kept(D)
  for i = 1, #entries do entries[i] = presented(entries[i]) end
  return '[' .. table.concat(entries, ',') .. ']'
end
