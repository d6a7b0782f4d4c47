--[=[ queue.put | put
  Args     worker, queue, jid, klass, data, delay, [name, value]... (options: retries, tags,
           priority, depends, rate_limits, group (aqless's own, see groups.lua), staged
           (aqless's own, below); throttles for queue.put)
  Reads    ql:j:<jid>, ql:j:<jid>-dependencies, ql:j:<dependency>, ql:config, throttles,
           ql:offers:<q>, ql:q:<q>-groups, ql:j:<staged>-staged
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
           'Put(): Arg "staged" names no staged data: <staged>'   InvalidArgumentError
           cjson   InvalidArgumentError
]=]
-- Option `staged` <jid> (aqless's own): the job's data is not the `data` argument (sent
-- empty) but the field `data` of the hash ql:j:<jid>-staged, which aqless's client writes,
-- with aqless's own JSON encoding of the data, in the transaction of the call
-- (MULTI, HSET, this call, DEL of that hash, EXEC: aqless.scripts.staging). The script does
-- not check that text again. A new job takes the hash as its own (RENAME): no byte of the
-- data passes through the script; a job put again reads it (HGET). A refused put, or one
-- that puts nothing (putNew, putDeduplicated), leaves the hash to the DEL.
Commands['queue.put'] = function(D, now, worker, queue, jid, klass, data, delay, a, first)
  return Job.put(D, now, a)
end
