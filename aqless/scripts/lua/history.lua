-- Job history: ql:j:<jid>-history holds JSON arrays [when, what] or [when, what, item].

local History = {}

-- Appends an entry, keeping the first entry and at most `max-job-history` entries in all.
-- Up to two entries every limit keeps them all, so the configuration is read only beyond.
function History.append(jid, now, what, item)
  local entry
  if item == nil then
    entry = cjson.encode({math.floor(now), what})
  else
    entry = cjson.encode({math.floor(now), what, item})
  end
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

-- A `put` entry; its item key is the writer's vocabulary's ({q} or {queue}).
function History.put(D, jid, now, queue)
  History.append(jid, now, 'put', {[D.history_queue] = queue})
end

-- The presented history: one object per entry, `when` and `what` added to the item. A put
-- entry names its queue in the reader's vocabulary, whichever vocabulary wrote it.
function History.read(D, jid)
  local entries = call('LRANGE', Keys.history(jid), 0, -1)
  local result = {}
  for i, text in ipairs(entries) do
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
    result[i] = item
  end
  return result
end
