-- Configuration: the ql:config hash, read once per call, with the built-in fallbacks.

local Config = {}

-- The values the script falls back to where an option is used and not set.
local FALLBACKS = {
  ['heartbeat'] = 60,
  ['grace-period'] = 10,
  ['jobs-history'] = 604800,
  ['jobs-history-count'] = 50000,
  ['max-job-history'] = 100,
  ['max-pop-retry'] = 1,
  ['max-worker-age'] = 86400,
  ['result-max-bytes'] = 1048576,
}

-- Refuses a value the script could not use for `option`: not a number, or below the least
-- value aqless.rules gives the clients (kept here for the clients that do not check: a
-- negative heartbeat loses every lock at once, a negative jobs-history purges every
-- completed job, a max-pop-retry of 0 never pops). `true`: the least itself is refused too.
-- A queue's own options by their suffix (made on each call: config.set is rare).
function Config.check(option, value)
  local ranges = {
    ['heartbeat'] = {0, true},
    ['grace-period'] = {0},
    ['jobs-history'] = {0},
    ['jobs-history-count'] = {0},
    ['max-job-history'] = {0},
    ['max-pop-retry'] = {1},
    ['max-worker-age'] = {0},
    ['result-max-bytes'] = {0},
    ['-heartbeat'] = {0, true},
    ['-max-concurrency'] = {0},
    ['-max-pop-retry'] = {1},
  }
  local least = ranges[option]
  if least == nil then
    for suffix, found in pairs(ranges) do
      local own = string.sub(suffix, 1, 1) == '-' and #option > #suffix
      if own and string.sub(option, -#suffix) == suffix then least = found end
    end
  end
  if least == nil then return end
  local given = number(value)
  if given == nil then
    raise('config.set(): Arg "value" not a number for ' .. option .. ': ' .. value)
  end
  if given < least[1] or (least[2] and given == least[1]) then
    local bound = (least[2] and 'above ' or 'from ') .. least[1]
    raise('config.set(): Arg "value" of ' .. option .. ' must be ' .. bound .. ': ' .. value)
  end
end

local stored = nil

-- Every stored option (name -> string), read with one HGETALL per call.
function Config.stored()
  if stored == nil then
    stored = {}
    local flat = call('HGETALL', Keys.config())
    for i = 1, #flat, 2 do stored[flat[i]] = flat[i + 1] end
  end
  return stored
end

-- An option as a number: the stored value if numeric, else `fallback`, else the built-in.
function Config.number(name, fallback)
  local value = number(Config.stored()[name])
  if value ~= nil then return value end
  if fallback ~= nil then return fallback end
  return FALLBACKS[name]
end

-- HB(q): the lock duration of a queue (config <queue>-heartbeat, else heartbeat).
function Config.heartbeat(queue)
  return Config.number(queue .. '-heartbeat', Config.number('heartbeat'))
end

-- The value `config.get <option>` answers (the name is shared by both vocabularies): the
-- stored string, else the classic default (numbers stay numbers), else reqless's default.
function Config.get(option)
  local value = Config.stored()[option]
  if value ~= nil then return value end
  value = CLASSIC.config_defaults[option]
  if value ~= nil then return value end
  return REQLESS.config_defaults[option]
end

-- The defaults of a vocabulary overlaid with every stored option.
function Config.all(D)
  local result = {}
  for name, value in pairs(D.config_defaults) do result[name] = value end
  for name, value in pairs(Config.stored()) do result[name] = value end
  return result
end

-- One stored option (a string, or nil): from the options read already, else its own HGET,
-- so a call that reads no other option pays for this one only.
function Config.option(name)
  if stored ~= nil then return stored[name] end
  return call('HGET', Keys.config(), name) or nil
end

function Config.forget() stored = nil end

function Config.set(option, value)
  call('HSET', Keys.config(), option, value)
  stored = nil
end

function Config.unset(option)
  call('HDEL', Keys.config(), option)
  stored = nil
end
