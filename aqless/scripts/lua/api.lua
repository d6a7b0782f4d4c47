-- Entry point: ARGV = command, now, arguments...; no KEYS, or one KEY ending in ':' that
-- replaces the 'ql:' key prefix (a hash-tagged prefix keeps a deployment in one slot).

local function main()
  if #KEYS > 0 then
    check(#KEYS == 1 and string.sub(KEYS[1], -1) == ':', 'No Keys should be provided')
    PREFIX = KEYS[1]
  end
  local name = ARGV[1]
  check(name, 'Must provide a command')
  local command = find_command(name)
  check(command, 'Unknown command ' .. name)
  local now = number(ARGV[2])
  check(now, 'Arg "now" missing or not a number: nil')
  local a = {n = math.max(0, #ARGV - 2)}
  for i = 3, #ARGV do a[i - 2] = ARGV[i] end
  return command(now, a)
end

return main()
