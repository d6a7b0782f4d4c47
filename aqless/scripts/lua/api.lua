-- The dispatcher: KEYS = none, or one key ending in ':' that replaces the 'ql:' key prefix
-- (a hash-tagged prefix keeps a deployment in one slot); ARGV = command, now, arguments...
-- The script (script.lua) and the function library (library.lua) both end by calling it.

-- Starts a call: a function library keeps module state between calls, so every per-call
-- cache is cleared here (a script starts afresh anyway).
local function start_call(keys)
  call = redis.call
  local prefix = PREFIX
  PREFIX = 'ql:'
  if #keys > 0 then
    check(#keys == 1 and string.sub(keys[1], -1) == ':', 'No Keys should be provided')
    PREFIX = keys[1]
  end
  if PREFIX ~= prefix then Keys.forget_made() end
  Config.forget()
  Events.forget()
  Throttle.forget()
  Groups.forget()
  Groups.rates.forget()
  Stats.folded = nil  -- (a call stopped while folding: jobs.outcomes)
  Job.unrelated = nil
end

local function main(keys, argv)
  start_call(keys)
  local name = argv[1]
  check(name, 'Must provide a command')
  local command = find_command(name)
  if command == nil then raise('Unknown command ' .. name) end
  local now = number(argv[2])
  check(now, 'Arg "now" missing or not a number: nil')
  local a
  if #argv <= 64 then
    -- one constructor sizes the table once (filled in a loop, it is rebuilt as it grows);
    -- unpack has a limit, so long argument lists (cancel of many jids...) take the loop
    a = {n = math.max(0, #argv - 2), unpack(argv, 3)}
  else
    a = {n = #argv - 2}
    for i = 3, #argv do a[i - 2] = argv[i] end
  end
  return command(now, a)
end
