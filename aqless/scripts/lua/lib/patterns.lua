-- Queue identifier patterns and queue priority patterns: documents stored for clients,
-- which use them to decide which queues a worker serves and in which order.

local Patterns = {}

local DEFAULT_PRIORITY = '{"fairly": false, "pattern": ["default"]}'

-- The legacy qmore:* keys are only read and cleared under the standard prefix: a custom
-- prefix keeps every key of a deployment under it.
local function legacy(name)
  if PREFIX == 'ql:' then return 'qmore:' .. name end
  return nil
end

function Patterns.identifiers()
  local flat = call('HGETALL', Keys.patterns('identifiers'))
  if #flat == 0 and legacy('dynamic') then flat = call('HGETALL', legacy('dynamic')) end
  local result = {default = '["*"]'}
  for i = 1, #flat, 2 do result[flat[i]] = flat[i + 1] end
  return result
end

function Patterns.set_identifiers(a)
  check(a.n % 2 == 0, 'Odd number of identifier patterns: ' .. a.n .. ' arguments')
  local kept = {}
  local has_default = false
  for i = 1, a.n, 2 do
    local name, text = a[i], a[i + 1]
    local value = decode(text)
    local kind = type(value)
    check(kind == 'table' or kind == 'string',
      'queueIdentifierPatterns.setAll(): patterns of "' .. name .. '" must be a JSON list')
    if #value > 0 then
      kept[#kept + 1] = name
      kept[#kept + 1] = text
      if name == 'default' then has_default = true end
    end
  end
  if not has_default then
    kept[#kept + 1] = 'default'
    kept[#kept + 1] = '["*"]'
  end
  local key = Keys.patterns('identifiers')
  call('DEL', key)
  if legacy('dynamic') then call('DEL', legacy('dynamic')) end
  call('HSET', key, unpack(kept))
end

function Patterns.priorities()
  local list = call('LRANGE', Keys.patterns('priorities'), 0, -1)
  if #list == 0 and legacy('priority') then list = call('LRANGE', legacy('priority'), 0, -1) end
  if #list == 0 then list = {DEFAULT_PRIORITY} end
  return list
end

function Patterns.set_priorities(patterns)
  local elements = {}
  local has_default = false
  for i = 1, #patterns do
    -- like the reference, the scan stops at the first default entry
    if not has_default then
      local value = decode(patterns[i])
      local kind = type(value) == 'table' and type(value.pattern)
      check(kind == 'table' or kind == 'string',
        'queuePriorityPatterns.setAll(): each pattern must be a JSON object with a "pattern"')
      if kind == 'table' and #value.pattern == 1 and value.pattern[1] == 'default' then
        has_default = true
      end
    end
    elements[i] = patterns[i]
  end
  local key = Keys.patterns('priorities')
  call('DEL', key)
  if legacy('priority') then call('DEL', legacy('priority')) end
  if #patterns == 0 then return end
  if not has_default then elements[#elements + 1] = DEFAULT_PRIORITY end
  call('RPUSH', key, unpack(elements))
end
