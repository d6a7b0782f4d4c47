--[=[ queue.put | put
  Args     worker, queue, jid, klass, data, delay, [name, value]... (options: retries, tags,
           priority, depends, rate_limits, group (aqless's own, see groups.lua); throttles
           for queue.put)
  Reads    ql:j:<jid>, ql:j:<jid>-dependencies, ql:j:<dependency>, ql:config, throttles,
           ql:offers:<q>, ql:q:<q>-groups
  Writes   ql:j:<jid>, ql:j:<jid>-history, ql:j:<jid>-dependencies,
           ql:j:<dependency>-dependents, <q>-* (old and new queue), ql:queues, ql:w:<old
           worker>:jobs, ql:completed, ql:t:<tag>, ql:tags, ql:f:<group>, ql:failures,
           ql:s:stats:<bin>:<q>, ql:th:<tid>-pending; a grouped put: ql:q:<q>-groups,
           ql:q:<q>-groups-ready, ql:q:<q>-group-work:<g>; a push to an offering worker writes
           what pop writes
  Returns  the jid
  Errors   'Queue(): no queue name provided'   InvalidArgumentError
           'Put(): Arg "jid" missing'   InvalidArgumentError
           'Put(): Arg "klass" missing'   InvalidArgumentError
           'Put(): Arg "data" missing or not JSON: <data>'   InvalidArgumentError
           'Put(): Arg "delay" not a number: <delay>'   InvalidArgumentError
           'Odd number of additional args: <n> option arguments'   InvalidArgumentError
           'Put(): Arg "retries" not a number: <value>'   InvalidArgumentError
           'Put(): Arg "tags" not JSON<value>'   InvalidArgumentError
           'Put(): Arg "priority" not a number<value>'   InvalidArgumentError
           'Put(): Arg "depends" not JSON: <value>'   InvalidArgumentError
           'Put(): Arg "throttles" not JSON array: <value>'   InvalidArgumentError
           'Put(): Arg "rate_limits" not JSON array: <value>'   InvalidArgumentError
           'Put(): Arg "group" empty'   InvalidArgumentError
           cjson   InvalidArgumentError
]=]
Commands['queue.put'] = function(D, now, worker, queue, jid, klass, data, delay, a, first)
  return Job.put(D, now, a)
end
