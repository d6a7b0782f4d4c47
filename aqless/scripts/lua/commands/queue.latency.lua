--[=[ queue.latency
  Args     queue (aqless's own: how long the queue's first job in line has waited)
  Reads    ql:q:<q>-work, ql:j:<jid>-history (of the job a pop would take first)
  Writes   none
  Returns  integer, the whole seconds the job first in line has waited since it was last
           put (since its first history entry if none is kept); 0 when no job waits
  Errors   'Queue(): no queue name provided'   InvalidArgumentError
]=]
Commands['queue.latency'] = function(D, now, queue)
  check(queue, 'Queue(): no queue name provided')
  local first = call('ZREVRANGE', Keys.queue(queue, 'work'), 0, 0)[1]
  if first == nil then return 0 end
  local entries = call('LRANGE', Keys.history(first), 0, -1)
  local since = now
  for i = #entries, 1, -1 do
    local entry = cjson.decode(entries[i])
    if entry[2] == 'put' or i == 1 then
      since = entry[1]
      break
    end
  end
  return math.max(0, math.floor(now - since))
end
