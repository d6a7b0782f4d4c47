-- The command table: every command name of both vocabularies, mapped to the core with its
-- dialect. `a` holds the arguments after `now` (a.n of them).
--
-- Contracts. Every entry of the table below is preceded by its header (and only here: the
-- core functions carry none), or, for the twin of a command in the other vocabulary, by
-- `-- contract: see <name>` pointing at the header that names both. A header reads:
--   --- <command> [| <twin>...]
--   -- args: the arguments after `now`, by name ([x] optional, x... repeated)
--   -- reads: / -- writes: the keys touched, as CORE.md section 2.1 names them (docs/protocol)
--   -- reply: what comes back
--   -- errors: the error texts, separated by `; `
-- A field may go on over lines that start `--    `. Shorthands: <q>-* is the five job sets
-- of a queue (ql:q:<q>-work|locks|scheduled|depends|throttled); `job objects` is what a job
-- object reads (ql:j:<jid>, ql:j:<jid>-history|-dependents|-dependencies, ql:tracked);
-- `throttles` is ql:th:<tid>, ql:th:<tid>-locks|-pending. In an error text, <x> stands for
-- a value the script appends, {x} for a placeholder of dialect.lua, `cjson` for the JSON
-- library's own decoding error, and `as <command>` for the errors of another header.
-- tests/scripts/test_contracts.py holds the headers to this form and to the code's texts.

local function json(value) return cjson.encode(value) end

local function object_or_nil(value)
  if value == nil then return nil end
  return cjson.encode(value)
end

local function failed_page(start, limit)
  return Queue.page(start, limit, 25, 'Failed(): Arg "start" is not a number: ',
    'Failed(): Arg "limit" is not a number: ')
end

local function jobs_page(D, offset, count)
  return Queue.page(offset, count, 25, 'Jobs(): Arg "offset" not a number: ',
    say(D.errors.jobs_count, {value = ''}))
end

local function tag_page(D, offset, count)
  return Queue.page(offset, count, 25, 'Tag(): Arg "offset" not a number: ',
    say(D.errors.tag_count, {value = ''}))
end

local function tagged(D, tag, offset, count)
  check(tag, 'Tag(): Arg "tag" missing')
  local first, n = tag_page(D, offset, count)
  return json(Tags.tagged(tag, first, n))
end

local function top_tags(D, offset, count)
  local first, n = tag_page(D, offset, count)
  return D.list(Tags.top(first, n))
end

local function jobs_by_state(D, now, state, queue, offset, count)
  check(queue, 'Jobs(): Arg "queue" missing')
  local first, n = jobs_page(D, offset, count)
  return Queue.jobs_by_state(D, now, state, queue, first, n)
end

local function stats(now, queue, date)
  check(queue, 'Queue(): no queue name provided')
  local day = number(date)
  check(day, 'Stats(): Arg "date" missing or not a number: ' .. tostring(date))
  return json(Stats.of_day(queue, day))
end

local function config_set(option, value)
  check(option, 'config.set(): Arg "option" missing')
  check(value, 'config.set(): Arg "value" missing')
  Events.config_set(option, value)
  Config.set(option, value)
end

local function config_unset(option)
  check(option, 'config.unset(): Arg "option" missing')
  Events.config_unset(option)
  Config.unset(option)
end

local function tid_given(tid) check(tid, 'Throttle(): no tid provided') end

local function throttle_set(tid, maximum, expiration)
  tid_given(tid)
  check(number(maximum), 'Throttle(): Arg "maximum" not a number: ' .. tostring(maximum))
  local seconds = optional_number(expiration, 0, 'Throttle(): Arg "expiration" not a number: ')
  Throttle.set(tid, maximum, math.min(whole(seconds), 2 ^ 31))
end

-- Commands by the word before their first dot ('' for the classic names without one). A
-- call builds only its own group's table: every closure a script creates costs the server
-- time on every call, so building all of them would cost more than most commands do.
local GROUPS = {}

-- Groups built so far: one per call in a script, kept across calls in a function library.
local built = {}

-- Handlers by command name, as found (a function library keeps them between calls).
local found = {}

-- The handler of a command name (function(now, a)), or nil.
local function find_command(name)
  local handler = found[name]
  if handler ~= nil then return handler end
  local prefix = string.match(name, '^([^.]*)%.') or ''
  if built[prefix] == nil then
    local group = GROUPS[prefix]
    if group == nil then return nil end
    built[prefix] = group()
  end
  handler = built[prefix][name]
  if handler ~= nil then found[name] = handler end
  return handler
end

GROUPS[''] = function() return {
  --- put | queue.put
  -- args: worker, queue, jid, klass, data, delay, [name, value]...
  --    (options: retries, tags, priority, depends, rate_limits; throttles for queue.put)
  -- reads: ql:j:<jid>, ql:j:<jid>-dependencies, ql:j:<dependency>, ql:config, throttles,
  --    ql:offers:<q>
  -- writes: ql:j:<jid>, ql:j:<jid>-history, ql:j:<jid>-dependencies, ql:j:<dependency>-dependents,
  --    <q>-* (old and new queue), ql:queues, ql:w:<old worker>:jobs, ql:completed, ql:t:<tag>,
  --    ql:tags, ql:f:<group>, ql:failures, ql:s:stats:<bin>:<q>, ql:th:<tid>-pending;
  --    a push to an offering worker writes what pop writes
  -- reply: the jid
  -- errors: Queue(): no queue name provided; Put(): Arg "jid" missing;
  --    Put(): Arg "klass" missing; Put(): Arg "data" missing or not JSON: <data>;
  --    Put(): Arg "delay" not a number: <delay>;
  --    Odd number of additional args: <n> option arguments;
  --    Put(): Arg "retries" not a number: <value>; Put(): Arg "tags" not JSON<value>;
  --    Put(): Arg "priority" not a number<value>; Put(): Arg "depends" not JSON: <value>;
  --    Put(): Arg "throttles" not JSON array: <value>;
  --    Put(): Arg "rate_limits" not JSON array: <value>; cjson
  ['put'] = function(now, a) return Job.put(CLASSIC, now, a) end,
  --- requeue | job.requeue
  -- args: worker, queue, jid, klass, data, delay, [name, value]... (as put)
  -- reads: as put
  -- writes: as put
  -- reply: the jid
  -- errors: Job(): no jid provided; Requeue(): Job <jid> does not exist; as put
  ['requeue'] = function(now, a) return Job.requeue(CLASSIC, now, a) end,
  --- pop | queue.pop
  -- args: queue, worker, count (reqless: limit)
  -- reads: ql:paused_queues, ql:config, <q>-*, ql:q:<q>-recur, ql:r:<id>, job objects,
  --    throttles
  -- writes: ql:workers, ql:w:<worker>:jobs, <q>-*, ql:j:<jid>, ql:j:<jid>-history, throttles,
  --    ql:s:wait:<bin>:<q>, ql:s:stats:<bin>:<q>, ql:f:<group>, ql:failures (expired locks),
  --    ql:r:<id>, ql:q:<q>-recur, ql:t:<tag>, ql:tags (recurring spawns)
  -- reply: JSON list of the popped job objects (classic writes an empty one {}, reqless [])
  -- errors: Queue(): no queue name provided; Pop(): Arg "worker" missing;
  --    Pop(): Arg "count" missing or not a number: {value};
  --    Pop(): Arg "limit" missing or not a number: {value}
  ['pop'] = function(now, a)
    local queue, worker, count = a[1], a[2], a[3]
    return Queue.pop(CLASSIC, now, queue, worker, count)
  end,
  --- peek
  -- args: queue, count
  -- reads: ql:q:<q>-locks|work|scheduled|recur, ql:r:<id>, job objects
  -- writes: ql:q:<q>-work|scheduled|recur, ql:j:<jid>, ql:j:<jid>-history, ql:r:<id>,
  --    ql:t:<tag>, ql:tags (recurring spawns and scheduled promotion)
  -- reply: JSON list of the job objects a pop would take (empty: {})
  -- errors: Queue(): no queue name provided; Peek(): Arg "count" missing or not a number: <count>
  ['peek'] = function(now, a)
    local queue, count = a[1], a[2]
    return Queue.peek(CLASSIC, now, queue, count)
  end,
  --- complete
  -- args: jid, worker, queue, data, [name, value]...
  --    (options: next, delay, depends; aqless's own, without next: result, result_dropped)
  -- reads: ql:j:<jid>, ql:j:<jid>-dependents, ql:tracked, ql:config, ql:completed, throttles
  -- writes: ql:j:<jid>, ql:j:<jid>-history, <q>-*, throttles, ql:s:run:<bin>:<q>,
  --    ql:w:<worker>:jobs, ql:completed, the released dependents' ql:j:<dependent>,
  --    ql:j:<dependent>-dependencies and queue sets; retention deletes old jobs' ql:j:<old>,
  --    ql:j:<old>-history, ql:t:<tag>, ql:tags; with next: ql:queues,
  --    ql:q:<next>-work|scheduled|depends, ql:j:<jid>-dependencies, ql:j:<dependency>-dependents
  -- reply: the new state: complete; with next: waiting, scheduled or depends
  -- errors: Job(): no jid provided; Complete(): Arg "worker" missing;
  --    Complete(): Arg "queue" missing; Complete(): Arg "data" missing or not JSON: <data>;
  --    assertion failed!; Complete(): Arg "depends" not JSON: <depends>;
  --    Complete(): "delay" cannot be used without a "next".;
  --    Complete(): "depends" cannot be used without a "next".;
  --    Complete(): Job {jid} does not exist;
  --    Complete(): Job {jid} is not currently running: {state};
  --    Complete(): Job {jid} has been handed out to another worker: {worker};
  --    Complete(): Job {jid} running in another queue: {queue};
  --    Complete(): "result" cannot be used with a "next".; Complete(): Arg "result" not JSON;
  --    cjson
  ['complete'] = function(now, a)
    local jid, worker, queue, data = a[1], a[2], a[3], a[4]
    return Job.complete(CLASSIC, now, jid, worker, queue, data, options(a, 5))
  end,
  --- fail | job.fail
  -- args: jid, worker, group, message, [data]
  -- reads: ql:j:<jid>, ql:tracked, ql:config
  -- writes: ql:j:<jid>, ql:j:<jid>-history, ql:w:<worker>:jobs, <q>-*, throttles,
  --    ql:s:stats:<bin>:<q>, ql:failures, ql:f:<group>
  -- reply: the jid
  -- errors: Job(): no jid provided; Fail(): Arg "worker" missing; Fail(): Arg "group" missing;
  --    Fail(): Arg "message" missing; Fail(): Job {jid}does not exist;
  --    Fail(): Job {jid}not currently running: {state};
  --    Fail(): Job {jid} running with another worker: {worker}; Fail(): Job does not exist;
  --    Fail(): Job not currently running: {state};
  --    Fail(): Job running with another worker: {worker}; cjson
  ['fail'] = function(now, a)
    local jid, worker, group, message, data = a[1], a[2], a[3], a[4], a[5]
    return Job.fail(CLASSIC, now, jid, worker, group, message, data)
  end,
  --- retry | job.retry
  -- args: jid, queue, worker, [delay], [group], [message]
  -- reads: ql:j:<jid>, ql:tracked, ql:config
  -- writes: ql:j:<jid>, ql:j:<jid>-history, ql:q:<q>-locks, ql:w:<worker>:jobs, throttles,
  --    ql:q:<queue>-work|scheduled; when no retry is left: ql:failures, ql:f:<group>,
  --    ql:s:stats:<bin>:<queue>
  -- reply: integer, the retries left (below 0: the job failed)
  -- errors: Job(): no jid provided; Retry(): Arg "queue" missing;
  --    Retry(): Arg "queue_name" missing; Retry(): Arg "worker" missing;
  --    Retry(): Arg "delay" not a number: <delay>; Retry(): Job {jid} does not exist;
  --    Retry(): Job {jid} is not currently running: {state};
  --    Retry(): Job {jid} has been given to another worker: {worker};
  --    Retry(): Job does not exist; Retry(): Job is not currently running: {state};
  --    Retry(): Job has been given to another worker: {worker}
  ['retry'] = function(now, a)
    local jid, queue, worker, delay, group, message = a[1], a[2], a[3], a[4], a[5], a[6]
    return Job.retry(CLASSIC, now, jid, queue, worker, delay, group, message)
  end,
  --- heartbeat | job.heartbeat
  -- args: jid, worker, [data]
  -- reads: ql:j:<jid>, ql:config
  -- writes: ql:j:<jid>, ql:w:<worker>:jobs, ql:q:<q>-locks, ql:workers (classic only)
  -- reply: the new lock expiry time (number)
  -- errors: Job(): no jid provided; Heatbeat(): Arg "worker" missing;
  --    Heartbeat(): Job {jid} does not exist;
  --    Heartbeat(): Job {jid} not currently running: {state};
  --    Heartbeat(): Job {jid} given out to another worker: {worker};
  --    Heartbeat(): Job does not exist; Heartbeat(): Job not currently running: {state};
  --    Heartbeat(): Job given out to another worker: {worker}; cjson
  ['heartbeat'] = function(now, a)
    local jid, worker, data = a[1], a[2], a[3]
    return Job.heartbeat(CLASSIC, now, jid, worker, data)
  end,
  --- timeout | job.timeout
  -- args: jid...
  -- reads: ql:j:<jid>, ql:config
  -- writes: ql:j:<jid>, ql:j:<jid>-history, ql:q:<q>-locks|work, throttles
  -- reply: nil
  -- errors: Timeout(): Job {jid} does not exist; Timeout(): Job {jid} not running;
  --    Timeout(): Job <jid> not running
  ['timeout'] = function(now, a) Job.timeout(CLASSIC, now, rest(a, 1)) end,
  --- cancel | job.cancel
  -- args: jid...
  -- reads: ql:j:<jid>, ql:j:<jid>-dependents, ql:j:<jid>-dependencies, ql:tracked
  -- writes: deletes ql:j:<jid>, ql:j:<jid>-history, ql:j:<jid>-dependencies;
  --    ql:j:<dependency>-dependents, ql:w:<worker>:jobs, <q>-*, throttles, ql:f:<group>,
  --    ql:failures, ql:s:stats:<bin>:<q>, ql:t:<tag>, ql:tags
  -- reply: the given jids (a list)
  -- errors: Cancel(): <jid> is a dependency of <dependent> but is not mentioned to be canceled
  ['cancel'] = function(now, a) return Job.cancel(CLASSIC, now, rest(a, 1)) end,
  --- depends
  -- args: jid, on, jid... | jid, off, jid... | jid, off, all
  -- reads: ql:j:<jid>, ql:j:<dependency>, ql:j:<jid>-dependencies
  -- writes: ql:j:<jid>-dependencies, ql:j:<dependency>-dependents, ql:j:<jid>,
  --    ql:q:<q>-depends|work (when the last dependency goes)
  -- reply: 1
  -- errors: Job(): no jid provided; Depends(): Arg "command" missing;
  --    Depends(): Job <jid> not in the depends state: <state>;
  --    Depends(): Argument "command" must be "on" or "off"
  ['depends'] = function(now, a)
    local jid, command = a[1], a[2]
    return Job.depends(CLASSIC, now, jid, command, rest(a, 3))
  end,
  --- priority | job.setPriority
  -- args: jid, priority
  -- reads: ql:j:<jid>, ql:q:<q>-work
  -- writes: ql:j:<jid>, ql:q:<q>-work
  -- reply: the priority (number)
  -- errors: Job(): no jid provided;
  --    Priority(): Arg "priority" missing or not a number: <priority>;
  --    Priority(): Job {jid} does not exist; Queue(): no queue name provided
  ['priority'] = function(now, a)
    local jid, priority = a[1], a[2]
    return Job.set_priority(CLASSIC, now, jid, priority)
  end,
  --- get | job.get
  -- args: jid
  -- reads: job objects
  -- writes: none
  -- reply: the job object (JSON), or nil
  -- errors: Job(): no jid provided
  ['get'] = function(now, a)
    local jid = a[1]
    check(jid, 'Job(): no jid provided')
    return Job.json(CLASSIC, jid)
  end,
  --- multiget | job.getMulti
  -- args: jid...
  -- reads: job objects
  -- writes: none
  -- reply: JSON list of the objects of the jobs that exist (empty: classic {}, reqless [])
  -- errors: none
  ['multiget'] = function(now, a) return Job.list_json(CLASSIC, rest(a, 1)) end,
  --- log | job.log
  -- args: jid, message, [data]
  -- reads: ql:j:<jid>, ql:config
  -- writes: ql:j:<jid>-history
  -- reply: nil
  -- errors: Log(): Argument 'jid' missing; Log(): Argument 'message' missing;
  --    Log(): Argument 'data' not cjson: <data>; Log(): Job <jid> does not exist; cjson
  ['log'] = function(now, a)
    local jid, message, data = a[1], a[2], a[3]
    Job.log(CLASSIC, now, jid, message, data)
  end,
  --- track
  -- args: none | track, jid | untrack, jid
  -- reads: ql:tracked, job objects
  -- writes: ql:tracked
  -- reply: none given: {"jobs": [job objects], "expired": [jids]}; else the number of members
  --    changed, as JSON text
  -- errors: Track(): Arg "jid" missing; Track(): Job does not exist;
  --    Track(): Unknown action "<action>"
  ['track'] = function(now, a)
    if a.n == 0 then return Job.tracked(CLASSIC) end
    local action, jid = a[1], a[2]
    return Job.track(CLASSIC, now, action, jid)
  end,
  --- tag
  -- args: add, jid, tag... | remove, jid, tag... | get, tag, [offset], [count] |
  --    top, [offset], [count]
  -- reads: ql:j:<jid>, ql:t:<tag>, ql:tags
  -- writes: ql:j:<jid>, ql:t:<tag>, ql:tags (add and remove)
  -- reply: add, remove: JSON list of the job's tags; get: {"total": n, "jobs": [jids]};
  --    top: JSON list of the tags at least two jobs carry
  -- errors: Tag(): Arg "command" must be "add", "remove", "get" or "top";
  --    Tag(): First argument must be "add", "remove" or "get"; Tag(): Arg "jid" missing;
  --    Tag(): Job <jid> does not exist; Tag(): Arg "tag" missing;
  --    Tag(): Arg "offset" not a number: <offset>; Tag(): Arg "count" not a number: {value}
  ['tag'] = function(now, a)
    local command = a[1]
    check(command, 'Tag(): Arg "command" must be "add", "remove", "get" or "top"')
    if command == 'add' then return Job.add_tags(CLASSIC, now, a[2], rest(a, 3)) end
    if command == 'remove' then return Job.remove_tags(CLASSIC, now, a[2], rest(a, 3)) end
    if command == 'get' then return tagged(CLASSIC, a[2], a[3], a[4]) end
    if command == 'top' then return top_tags(CLASSIC, a[2], a[3]) end
    raise('Tag(): First argument must be "add", "remove" or "get"')
  end,
  --- failed | jobs.failedByGroup
  -- args: none | group, [start], [limit]
  -- reads: ql:failures, ql:f:<group>
  -- writes: none
  -- reply: none given: {group: count}; else {"total": n, "jobs": [jids]}
  -- errors: Failed(): Arg "start" is not a number: <start>;
  --    Failed(): Arg "limit" is not a number: <limit>
  ['failed'] = function(now, a)
    local group = a[1]
    if group == nil then return json(Queue.failure_groups()) end
    local start, limit = failed_page(a[2], a[3])
    return json(Queue.failed_in_group(group, start, limit))
  end,
  --- unfail | queue.unfail
  -- args: queue, group, [count]
  -- reads: ql:f:<group>, ql:j:<jid>, ql:config
  -- writes: ql:j:<jid>, ql:j:<jid>-history, ql:q:<queue>-work, ql:f:<group>, ql:failures
  -- reply: integer, how many jobs moved
  -- errors: Queue(): no queue name provided; queue.unfail(): Arg "queue" missing;
  --    Unfail(): Arg "group" missing; Unfail(): Arg "count" not a number: <count>;
  --    Unfail(): Arg "count" must be greater than zero
  ['unfail'] = function(now, a)
    local queue, group, count = a[1], a[2], a[3]
    return Queue.unfail(CLASSIC, now, queue, group, count)
  end,
  --- jobs
  -- args: complete, [offset], [count] | state, queue, [offset], [count]
  --    (state: running, stalled, scheduled, depends, recurring)
  -- reads: ql:completed, ql:q:<q>-locks|scheduled|depends|recur
  -- writes: ql:q:<q>-scheduled|work, ql:j:<jid> (state scheduled promotes due jobs first)
  -- reply: a list of jids
  -- errors: Jobs(): Arg "state" missing; Jobs(): Arg "queue" missing;
  --    Jobs(): Arg "offset" not a number: <offset>; Jobs(): Arg "count" not a number: {value};
  --    Jobs(): Unknown type "<state>"
  ['jobs'] = function(now, a)
    local state = a[1]
    check(state, 'Jobs(): Arg "state" missing')
    if state == 'complete' then return Queue.completed(jobs_page(CLASSIC, a[2], a[3])) end
    return jobs_by_state(CLASSIC, now, state, a[2], a[3], a[4])
  end,
  --- queues | queue.counts
  -- args: [queue]
  -- reads: ql:queues, <q>-*, ql:q:<q>-recur, ql:paused_queues
  -- writes: ql:q:<q>-scheduled|work, ql:j:<jid> (due scheduled jobs are promoted first)
  -- reply: the counts object of the queue (JSON), or the JSON list of every queue's
  --    (empty: {}; queue.counts adds "throttled")
  -- errors: none
  ['queues'] = function(now, a)
    local queue = a[1]
    if queue ~= nil then return json(Queue.counts(CLASSIC, now, queue)) end
    return json(Queue.all_counts(CLASSIC, now))
  end,
  --- length | queue.length
  -- args: queue
  -- reads: ql:q:<q>-locks|work|scheduled
  -- writes: none
  -- reply: integer, the jobs running, waiting and scheduled
  -- errors: Queue(): no queue name provided
  ['length'] = function(now, a) return Queue.length(now, a[1]) end,
  --- pause | queue.pause
  -- args: queue...
  -- reads: none
  -- writes: ql:paused_queues
  -- reply: nil
  -- errors: <Pause>(): wrong number of arguments: give at least one name
  ['pause'] = function(now, a) Queue.pause(rest(a, 1)) end,
  --- unpause | queue.unpause
  -- args: queue...
  -- reads: none
  -- writes: ql:paused_queues
  -- reply: nil
  -- errors: <Unpause>(): wrong number of arguments: give at least one name
  ['unpause'] = function(now, a) Queue.unpause(rest(a, 1)) end,
  --- stats | queue.stats
  -- args: queue, date
  -- reads: ql:s:stats:<bin>:<q>, ql:s:wait:<bin>:<q>, ql:s:run:<bin>:<q>
  -- writes: none
  -- reply: the stats object of the day (JSON)
  -- errors: Queue(): no queue name provided; Stats(): Arg "date" missing or not a number: <date>
  ['stats'] = function(now, a)
    local queue, date = a[1], a[2]
    return stats(now, queue, date)
  end,
  --- workers | worker.jobs
  -- args: [worker]
  -- reads: ql:config, ql:workers, ql:w:<worker>:jobs
  -- writes: ql:workers, ql:w:<worker>:jobs (workers idle past max-worker-age are dropped)
  -- reply: the worker's {"jobs": [jids], "stalled": [jids]}, or the JSON list of every
  --    worker's {"name", "jobs": n, "stalled": n}, most recent first (empty: {})
  -- errors: none
  ['workers'] = function(now, a)
    local worker = a[1]
    if worker ~= nil then return json(Worker.jobs(now, worker)) end
    return json(Worker.counts(now))
  end,
  --- recur
  -- args: queue, jid, klass, data, interval, seconds, offset, [name, value]...
  --    (the word `interval`, then the interval; options: tags, priority, retries, backlog)
  -- reads: ql:r:<jid>
  -- writes: ql:r:<jid>, ql:q:<old queue>-recur, ql:q:<queue>-recur, ql:queues
  -- reply: the jid
  -- errors: Queue(): no queue name provided; RecurringJob On(): Arg "jid" missing;
  --    RecurringJob On(): Arg "klass" missing; RecurringJob On(): Arg "spec" missing;
  --    RecurringJob On(): Arg "data" not JSON: {value}; Recur(): schedule type "<type>" unknown;
  --    Recur(): Arg "interval" not a number: <interval>;
  --    Recur(): Arg "offset" not a number: <offset>;
  --    Recur(): Arg "interval" must be greater than 0; Odd number of additional args: {value};
  --    Recur(): Arg "tags" must be JSON string array: <tags>;
  --    Recur(): Arg "priority" not a number: <priority>;
  --    Recur(): Arg "retries" not a number: <retries>;
  --    Recur(): Arg "backlog" not a number: <backlog>; cjson
  ['recur'] = function(now, a) return Recurring.recur(CLASSIC, now, a) end,
  --- unrecur | recurringJob.cancel
  -- args: jid
  -- reads: ql:r:<jid>
  -- writes: ql:q:<q>-recur, ql:r:<jid> (deleted)
  -- reply: 1
  -- errors: Recurring(): no jid provided
  ['unrecur'] = function(now, a) return Recurring.cancel(a[1]) end,
} end

GROUPS['queue'] = function() return {
  --- queue.forget
  -- args: queue...
  -- reads: none
  -- writes: ql:queues
  -- reply: nil
  -- errors: <Forget>(): wrong number of arguments: give at least one name
  ['queue.forget'] = function(now, a) Queue.forget(rest(a, 1)) end,
  -- contract: see queues
  ['queue.counts'] = function(now, a)
    local queue = a[1]
    if queue ~= nil then return json(Queue.counts(RELESS, now, queue)) end
    return json(Queue.all_counts(RELESS, now))
  end,
  --- queue.jobsByState
  -- args: complete, [offset], [limit] | state, queue, [offset], [limit]
  --    (state: running, stalled, scheduled, depends, throttled, recurring)
  -- reads: ql:completed, ql:q:<q>-locks|scheduled|depends|throttled|recur
  -- writes: ql:q:<q>-scheduled|work, ql:j:<jid> (state scheduled promotes due jobs first)
  -- reply: JSON list of jids ([] when empty)
  -- errors: Jobs(): Arg "state" missing; Jobs(): Arg "queue" missing;
  --    Jobs(): Arg "offset" not a number: <offset>; Jobs(): Arg "limit" not a number: {value};
  --    Jobs(): Unknown type "<state>"
  ['queue.jobsByState'] = function(now, a)
    local state = a[1]
    check(state, 'Jobs(): Arg "state" missing')
    if state == 'complete' then
      return json_array(Queue.completed(jobs_page(RELESS, a[2], a[3])))
    end
    return json_array(jobs_by_state(RELESS, now, state, a[2], a[3], a[4]))
  end,
  -- contract: see length
  ['queue.length'] = function(now, a) return Queue.length(now, a[1]) end,
  -- contract: see pause
  ['queue.pause'] = function(now, a) Queue.pause(rest(a, 1)) end,
  -- contract: see unpause
  ['queue.unpause'] = function(now, a) Queue.unpause(rest(a, 1)) end,
  --- queue.peek
  -- args: queue, offset, limit
  -- reads: ql:q:<q>-locks|work|scheduled|recur, ql:r:<id>, job objects
  -- writes: ql:q:<q>-work|scheduled|recur, ql:j:<jid>, ql:j:<jid>-history, ql:r:<id>,
  --    ql:t:<tag>, ql:tags (recurring spawns and scheduled promotion)
  -- reply: JSON list of the job objects a pop would take, from offset ([] when empty)
  -- errors: Queue(): no queue name provided;
  --    Peek(): Arg "offset" missing or not a number: <offset>;
  --    Peek(): Arg "limit" missing or not a number: <limit>
  ['queue.peek'] = function(now, a)
    local queue, offset, limit = a[1], a[2], a[3]
    return Queue.peek_range(RELESS, now, queue, offset, limit)
  end,
  -- contract: see pop
  ['queue.pop'] = function(now, a)
    local queue, worker, limit = a[1], a[2], a[3]
    return Queue.pop(RELESS, now, queue, worker, limit)
  end,
  --- queue.popAfter
  -- args: queue, worker, limit, [data_apart], command, command's now, command's argument...
  --    (aqless's own: runs the outcome `command` (job.complete, job.completeAndRequeue,
  --    job.fail, job.retry or job.requeue) as its own call would, then pops as
  --    rateLimit.pop, with data_apart when given)
  -- reads: as the command, as rateLimit.pop
  -- writes: as the command, as rateLimit.pop
  -- reply: {ok or refused, rateLimit.pop's reply or the text of its refusal, ok or refused, the
  --    command's reply or the text of its refusal} (a refused command does not stop the pop)
  -- errors: PopAfter(): Arg "command" not an outcome: <command>;
  --    PopAfter(): Arg "now" not a number: <now>; Queue(): no queue name provided;
  --    Pop(): Arg "worker" missing; Pop(): Arg "limit" missing or not a number: {value}
  ['queue.popAfter'] = function(now, a) return Queue.pop_after(now, a, find_command) end,
  -- contract: see put
  ['queue.put'] = function(now, a) return Job.put(RELESS, now, a) end,
  --- queue.putDeduplicated
  -- args: id, mode, ttl, worker, queue, jid, klass, data, delay, [name, value]...
  --    (aqless's own: put's arguments behind a dedup id and its mode, job, ttl or debounce;
  --    see Dedup.put)
  -- reads: ql:dedup:<id>, ql:j:<holder>; as put
  -- writes: ql:dedup:<id>, ql:j:<jid>; as put (none when the put is deduplicated)
  -- reply: {jid, outcome}: the job holding the id, and put, deduplicated or debounced
  -- errors: Dedup(): Arg "id" missing; Dedup(): Arg "mode" must be job, ttl or debounce: <mode>;
  --    Dedup(): Arg "ttl" not a positive number: <ttl>; as put
  ['queue.putDeduplicated'] = function(now, a) return Dedup.put(RELESS, now, a) end,
  --- queue.recurAtInterval
  -- args: queue, jid, klass, data, interval, offset, [name, value]...
  --    (options: tags, priority, retries, backlog, throttles)
  -- reads: ql:r:<jid>
  -- writes: ql:r:<jid>, ql:q:<old queue>-recur, ql:q:<queue>-recur, ql:queues
  -- reply: the jid
  -- errors: Queue(): no queue name provided; Recur(): Arg "jid" missing;
  --    Recur(): Arg "klass" missing; Recur(): Arg "data" not JSON: {value};
  --    Recur(): Arg "interval" not a number: <interval>;
  --    Recur(): Arg "offset" not a number: <offset>;
  --    Recur(): Arg "interval" must be greater than 0;
  --    Recur(): Odd number of additional args: {value};
  --    Recur(): Arg "tags" must be JSON string array: <tags>;
  --    Recur(): Arg "priority" not a number: <priority>;
  --    Recur(): Arg "retries" not a number: <retries>;
  --    Recur(): Arg "backlog" not a number: <backlog>;
  --    Recur(): Arg "throttles" not JSON array: <throttles>; cjson
  ['queue.recurAtInterval'] = function(now, a) return Recurring.recur(RELESS, now, a) end,
  -- contract: see stats
  ['queue.stats'] = function(now, a)
    local queue, date = a[1], a[2]
    return stats(now, queue, date)
  end,
  --- queue.throttle.get
  -- args: queue
  -- reads: ql:th:<tid> (tid: the queue's throttle, ql:q:<q>)
  -- writes: none
  -- reply: {"id": tid, "maximum": n, "ttl": seconds} (JSON)
  -- errors: Queue(): no queue name provided
  ['queue.throttle.get'] = function(now, a)
    local queue = a[1]
    check(queue, 'Queue(): no queue name provided')
    return json(Throttle.info(Keys.queue_throttle(queue)))
  end,
  --- queue.throttle.set
  -- args: queue, maximum
  -- reads: none
  -- writes: ql:th:<tid> (tid: the queue's throttle, ql:q:<q>)
  -- reply: nil
  -- errors: Queue(): no queue name provided; Throttle(): Arg "maximum" not a number: <maximum>
  ['queue.throttle.set'] = function(now, a)
    local queue, maximum = a[1], a[2]
    check(queue, 'Queue(): no queue name provided')
    throttle_set(Keys.queue_throttle(queue), maximum, nil)
  end,
  -- contract: see unfail
  ['queue.unfail'] = function(now, a)
    local queue, group, count = a[1], a[2], a[3]
    return Queue.unfail(RELESS, now, queue, group, count)
  end,
} end

GROUPS['worker'] = function() return {
  --- worker.deregister | worker.forget
  -- args: worker...
  -- reads: none
  -- writes: ql:workers
  -- reply: nil
  -- errors: Worker(): wrong number of arguments: give at least one worker name
  ['worker.deregister'] = function(now, a) Worker.forget(rest(a, 1)) end,
  -- contract: see worker.deregister
  ['worker.forget'] = function(now, a) Worker.forget(rest(a, 1)) end,
  --- worker.offer
  -- args: worker, slots, seconds, queue...
  --    (aqless's own: a put into one of the queues pops a job for the worker, see Worker.offer)
  -- reads: none
  -- writes: ql:offers:<q>
  -- reply: the number of subscribers to ql:pushed (workers that hear put events), or nil
  --    when the user may not ask (PUBSUB NUMSUB)
  -- errors: Offer(): Arg "worker" missing; Offer(): Arg "slots" not a positive number: <slots>;
  --    Offer(): Arg "seconds" not a positive number: <seconds>;
  --    Offer(): wrong number of arguments: give at least one queue name
  ['worker.offer'] = function(now, a)
    local worker, slots, seconds = a[1], a[2], a[3]
    return Worker.offer(now, worker, slots, seconds, rest(a, 4))
  end,
  --- worker.withdraw
  -- args: worker, queue...
  -- reads: none
  -- writes: ql:offers:<q>
  -- reply: nil
  -- errors: Withdraw(): Arg "worker" missing
  ['worker.withdraw'] = function(now, a) Worker.withdraw(a[1], rest(a, 2)) end,
  -- contract: see workers
  ['worker.jobs'] = function(now, a)
    local worker = a[1]
    if worker ~= nil then return json(Worker.jobs(now, worker)) end
    return json(Worker.counts(now))
  end,
} end

GROUPS['config'] = function() return {
  --- config.get
  -- args: [option]
  -- reads: ql:config
  -- writes: none
  -- reply: none given: JSON object of every option (classic defaults overlaid with the
  --    stored ones); else the option's value, its classic default (numbers stay numbers),
  --    its reqless default, or nil (shared by both vocabularies)
  -- errors: none
  ['config.get'] = function(now, a)
    local option = a[1]
    if option == nil then return json(Config.all(CLASSIC)) end
    return Config.get(option)
  end,
  --- config.set
  -- args: option, value
  -- reads: none
  -- writes: ql:config
  -- reply: nil
  -- errors: config.set(): Arg "option" missing; config.set(): Arg "value" missing
  ['config.set'] = function(now, a)
    local option, value = a[1], a[2]
    config_set(option, value)
  end,
  --- config.unset
  -- args: option
  -- reads: none
  -- writes: ql:config
  -- reply: nil
  -- errors: config.unset(): Arg "option" missing
  ['config.unset'] = function(now, a) config_unset(a[1]) end,
  --- config.getAll
  -- args: none
  -- reads: ql:config
  -- writes: none
  -- reply: JSON object of every option (reqless defaults overlaid with the stored ones)
  -- errors: none
  ['config.getAll'] = function(now, a) return json(Config.all(RELESS)) end,
} end

GROUPS['recur'] = function() return {
  --- recur.get | recurringJob.get
  -- args: jid
  -- reads: ql:r:<jid>
  -- writes: none
  -- reply: the recurring-job object (JSON; reqless adds "throttles"), or nil
  -- errors: Recurring(): no jid provided
  ['recur.get'] = function(now, a) return object_or_nil(Recurring.object(CLASSIC, a[1])) end,
  --- recur.update | recurringJob.update
  -- args: jid, [name, value]...
  --    (names: priority, interval, retries, backlog, data, klass, queue; throttles for reqless)
  -- reads: ql:r:<jid>, ql:q:<q>-recur
  -- writes: ql:r:<jid>, ql:q:<q>-recur, ql:q:<new queue>-recur, ql:queues
  -- reply: 1
  -- errors: Recurring(): no jid provided; Recur(): No recurring job <jid>;
  --    No value provided for <name>; Recur(): Arg "<name>" must be a number: <value>;
  --    Recur(): Arg "backlog" not a number: <value>;
  --    Recur(): Arg "data" is not JSON-encoded: <value>;
  --    Recur(): Arg "throttles" is not JSON-encoded: <value>;
  --    Recur(): Unrecognized option "<name>"; cjson
  ['recur.update'] = function(now, a) return Recurring.update(CLASSIC, now, a) end,
  --- recur.tag | recurringJob.addTag
  -- args: jid, tag...
  -- reads: ql:r:<jid>
  -- writes: ql:r:<jid>
  -- reply: JSON list of the template's tags (empty: classic {}, reqless [])
  -- errors: Recurring(): no jid provided; Tag(): Job <jid> does not exist
  ['recur.tag'] = function(now, a) return Recurring.add_tags(CLASSIC, a[1], rest(a, 2)) end,
  --- recur.untag | recurringJob.removeTag
  -- args: jid, tag...
  -- reads: ql:r:<jid>
  -- writes: ql:r:<jid>
  -- reply: JSON list of the template's tags (empty: {})
  -- errors: Recurring(): no jid provided; Untag(): Job <jid> does not exist
  ['recur.untag'] = function(now, a) return Recurring.remove_tags(CLASSIC, a[1], rest(a, 2)) end,
} end

GROUPS['failureGroups'] = function() return {
  --- failureGroups.counts
  -- args: [start], [limit] (checked, then ignored)
  -- reads: ql:failures, ql:f:<group>
  -- writes: none
  -- reply: {group: count} (JSON)
  -- errors: Failed(): Arg "start" is not a number: <start>;
  --    Failed(): Arg "limit" is not a number: <limit>
  ['failureGroups.counts'] = function(now, a)
    local start, limit = a[1], a[2]
    failed_page(start, limit)
    return json(Queue.failure_groups())
  end,
} end

GROUPS['jobs'] = function() return {
  -- contract: see failed
  ['jobs.failedByGroup'] = function(now, a)
    local group = a[1]
    if group == nil then return json(Queue.failure_groups()) end
    local start, limit = failed_page(a[2], a[3])
    return json(Queue.failed_in_group(group, start, limit))
  end,
  --- jobs.tagged
  -- args: tag, [offset], [limit]
  -- reads: ql:t:<tag>
  -- writes: none
  -- reply: {"total": n, "jobs": [jids]} (JSON)
  -- errors: Tag(): Arg "tag" missing; Tag(): Arg "offset" not a number: <offset>;
  --    Tag(): Arg "limit" not a number: {value}
  ['jobs.tagged'] = function(now, a)
    local tag, offset, limit = a[1], a[2], a[3]
    return tagged(RELESS, tag, offset, limit)
  end,
  --- jobs.completed
  -- args: [offset], [limit]
  -- reads: ql:completed
  -- writes: none
  -- reply: JSON list of jids, most recently completed first ([] when empty)
  -- errors: Jobs(): Arg "offset" not a number: <offset>; Jobs(): Arg "limit" not a number: {value}
  ['jobs.completed'] = function(now, a)
    local offset, limit = a[1], a[2]
    return json_array(Queue.completed(jobs_page(RELESS, offset, limit)))
  end,
  --- jobs.progress
  -- args: jid...
  --    (aqless's own: what job.progress stored)
  -- reads: ql:j:<jid>
  -- writes: none
  -- reply: JSON object {jid: {"fraction", "message", "at"}} of the jobs that reported
  --    progress ({} when none)
  -- errors: none
  ['jobs.progress'] = function(now, a) return Progress.of(rest(a, 1)) end,
  --- jobs.tracked
  -- args: none
  -- reads: ql:tracked, job objects
  -- writes: none
  -- reply: {"jobs": [job objects], "expired": [jids]} (JSON)
  -- errors: none
  ['jobs.tracked'] = function(now, a) return Job.tracked(RELESS) end,
} end

GROUPS['job'] = function() return {
  --- job.addDependency
  -- args: jid, jid...
  -- reads: ql:j:<jid>, ql:j:<dependency>
  -- writes: ql:j:<jid>-dependencies, ql:j:<dependency>-dependents
  -- reply: 1
  -- errors: Job(): no jid provided; Depends(): Job <jid> not in the depends state: <state>
  ['job.addDependency'] = function(now, a)
    local jid = a[1]
    return Job.depends(RELESS, now, jid, 'on', rest(a, 2))
  end,
  --- job.removeDependency
  -- args: jid, jid... | jid, all
  -- reads: ql:j:<jid>, ql:j:<jid>-dependencies
  -- writes: ql:j:<jid>-dependencies, ql:j:<dependency>-dependents, ql:j:<jid>,
  --    ql:q:<q>-depends|work (when the last dependency goes)
  -- reply: 1
  -- errors: Job(): no jid provided; Depends(): Job <jid> not in the depends state: <state>
  ['job.removeDependency'] = function(now, a)
    local jid = a[1]
    return Job.depends(RELESS, now, jid, 'off', rest(a, 2))
  end,
  --- job.addTag
  -- args: jid, tag...
  -- reads: ql:j:<jid>
  -- writes: ql:j:<jid>, ql:t:<tag>, ql:tags
  -- reply: JSON list of the job's tags ([] when empty)
  -- errors: Tag(): Arg "jid" missing; Tag(): Job <jid> does not exist
  ['job.addTag'] = function(now, a)
    local jid = a[1]
    return Job.add_tags(RELESS, now, jid, rest(a, 2))
  end,
  --- job.removeTag
  -- args: jid, tag...
  -- reads: ql:j:<jid>, ql:t:<tag>
  -- writes: ql:j:<jid>, ql:t:<tag>, ql:tags
  -- reply: JSON list of the job's tags ([] when empty)
  -- errors: Tag(): Arg "jid" missing; Tag(): Job <jid> does not exist
  ['job.removeTag'] = function(now, a)
    local jid = a[1]
    return Job.remove_tags(RELESS, now, jid, rest(a, 2))
  end,
  -- contract: see cancel
  ['job.cancel'] = function(now, a) return Job.cancel(RELESS, now, rest(a, 1)) end,
  --- job.complete
  -- args: jid, worker, queue, data, [name, value]...
  --    (aqless's own options: result (JSON text, kept as the job's `result` field),
  --    result_dropped (why it has none), see results.lua; keep_data (any value): the job
  --    keeps its stored data, and `data` is neither read nor written)
  -- reads: ql:j:<jid>, ql:j:<jid>-dependents, ql:tracked, ql:config, ql:completed, throttles
  -- writes: ql:j:<jid>, ql:j:<jid>-history, <q>-*, throttles, ql:s:run:<bin>:<q>,
  --    ql:w:<worker>:jobs, ql:completed, the released dependents' ql:j:<dependent>,
  --    ql:j:<dependent>-dependencies and queue sets; retention deletes old jobs' ql:j:<old>,
  --    ql:j:<old>-history, ql:j:<old>-dependencies, ql:t:<tag>, ql:tags
  -- reply: complete
  -- errors: Job(): no jid provided; Complete(): Arg "worker" missing;
  --    Complete(): Arg "queue_name" missing; Complete(): Arg "data" missing or not JSON: <data>;
  --    Complete(): Job does not exist; Complete(): Job is not currently running: {state};
  --    Complete(): Job has been handed out to another worker: {worker};
  --    Complete(): Job running in another queue: {queue}; Complete(): Arg "result" not JSON;
  --    cjson
  ['job.complete'] = function(now, a)
    local jid, worker, queue, data = a[1], a[2], a[3], a[4]
    local o = options(a, 5)
    local keep = o.keep_data ~= nil
    if o ~= NOTHING then o = {result = o.result, result_dropped = o.result_dropped} end
    return Job.complete(RELESS, now, jid, worker, queue, data, o, keep)
  end,
  --- job.completeAndRequeue
  -- args: jid, worker, queue, data, next, [name, value]... (options: delay, depends;
  --    aqless's own: keep_data, as job.complete's)
  -- reads: ql:j:<jid>, ql:j:<dependency>, ql:tracked, ql:config, throttles
  -- writes: ql:j:<jid>, ql:j:<jid>-history, <q>-*, throttles, ql:s:run:<bin>:<q>,
  --    ql:w:<worker>:jobs, ql:queues, ql:q:<next>-work|scheduled|depends,
  --    ql:j:<jid>-dependencies, ql:j:<dependency>-dependents
  -- reply: the new state: waiting, scheduled or depends
  -- errors: Job(): no jid provided; Complete(): Arg "worker" missing;
  --    Complete(): Arg "queue_name" missing; Complete(): Arg "data" missing or not JSON: <data>;
  --    assertion failed!; Complete(): Arg "depends" not JSON: <depends>;
  --    Complete(): Job does not exist; Complete(): Job is not currently running: {state};
  --    Complete(): Job has been handed out to another worker: {worker};
  --    Complete(): Job running in another queue: {queue}; cjson
  ['job.completeAndRequeue'] = function(now, a)
    local jid, worker, queue, data, next_queue = a[1], a[2], a[3], a[4], a[5]
    local o = options(a, 6)
    if o == NOTHING then o = {} end
    o.next = next_queue
    return Job.complete(RELESS, now, jid, worker, queue, data, o, o.keep_data ~= nil)
  end,
  -- contract: see fail
  ['job.fail'] = function(now, a)
    local jid, worker, group, message, data = a[1], a[2], a[3], a[4], a[5]
    return Job.fail(RELESS, now, jid, worker, group, message, data)
  end,
  --- job.result
  -- args: jid
  --    (aqless's own: the job's kept return value, see results.lua)
  -- reads: ql:j:<jid>
  -- writes: none
  -- reply: JSON {"state", "result" (the stored JSON text), "dropped" (why none was kept),
  --    "failure"}, the last three when present; nil when the job does not exist
  -- errors: Job(): no jid provided
  ['job.result'] = function(now, a) return Results.json(a[1]) end,
  --- job.dedup
  -- args: jid
  --    (aqless's own: the dedup id the job was put with, see dedup.lua)
  -- reads: ql:j:<jid>
  -- writes: none
  -- reply: the dedup id; nil when the job has none or does not exist
  -- errors: Job(): no jid provided
  ['job.dedup'] = function(now, a) return Dedup.id_of(a[1]) end,
  -- contract: see get
  ['job.get'] = function(now, a)
    local jid = a[1]
    check(jid, 'Job(): no jid provided')
    return Job.json(RELESS, jid)
  end,
  -- contract: see multiget
  ['job.getMulti'] = function(now, a) return Job.list_json(RELESS, rest(a, 1)) end,
  -- contract: see heartbeat
  ['job.heartbeat'] = function(now, a)
    local jid, worker, data = a[1], a[2], a[3]
    return Job.heartbeat(RELESS, now, jid, worker, data)
  end,
  --- job.progress
  -- args: jid, worker, fraction, [message]
  --    (aqless's own: the job's code reports how far it got, see progress.lua)
  -- reads: ql:j:<jid>
  -- writes: ql:j:<jid> (progress, progress_message, progress_at), publishes ql:progress
  -- reply: nil
  -- errors: Job(): no jid provided; Progress(): Arg "worker" missing;
  --    Progress(): Arg "fraction" not a number from 0 to 1: <fraction>;
  --    Progress(): Arg "message" longer than 1024 bytes: <length>;
  --    Progress(): Job <jid> does not exist;
  --    Progress(): Job <jid> not currently running: <state>;
  --    Progress(): Job <jid> given out to another worker: <worker>
  ['job.progress'] = function(now, a)
    local jid, worker, fraction, message = a[1], a[2], a[3], a[4]
    Progress.report(now, jid, worker, fraction, message)
  end,
  -- contract: see log
  ['job.log'] = function(now, a)
    local jid, message, data = a[1], a[2], a[3]
    Job.log(RELESS, now, jid, message, data)
  end,
  -- contract: see requeue
  ['job.requeue'] = function(now, a) return Job.requeue(RELESS, now, a) end,
  -- contract: see retry
  ['job.retry'] = function(now, a)
    local jid, queue, worker, delay, group, message = a[1], a[2], a[3], a[4], a[5], a[6]
    return Job.retry(RELESS, now, jid, queue, worker, delay, group, message)
  end,
  -- contract: see priority
  ['job.setPriority'] = function(now, a)
    local jid, priority = a[1], a[2]
    return Job.set_priority(RELESS, now, jid, priority)
  end,
  -- contract: see timeout
  ['job.timeout'] = function(now, a) Job.timeout(RELESS, now, rest(a, 1)) end,
  --- job.track | job.untrack
  -- args: jid
  -- reads: ql:j:<jid>
  -- writes: ql:tracked
  -- reply: the number of members changed (0 or 1), as JSON text
  -- errors: Track(): Arg "jid" missing; Track(): Job does not exist
  ['job.track'] = function(now, a) return Job.track(RELESS, now, 'track', a[1]) end,
  -- contract: see job.track
  ['job.untrack'] = function(now, a) return Job.track(RELESS, now, 'untrack', a[1]) end,
} end

GROUPS['tags'] = function() return {
  --- tags.top
  -- args: [offset], [limit]
  -- reads: ql:tags
  -- writes: none
  -- reply: JSON list of the tags at least two jobs carry, most used first ([] when empty)
  -- errors: Tag(): Arg "offset" not a number: <offset>; Tag(): Arg "limit" not a number: {value}
  ['tags.top'] = function(now, a)
    local offset, limit = a[1], a[2]
    return top_tags(RELESS, offset, limit)
  end,
} end

GROUPS['queues'] = function() return {
  --- queues.counts
  -- args: none
  -- reads: ql:queues, <q>-*, ql:q:<q>-recur, ql:paused_queues
  -- writes: ql:q:<q>-scheduled|work, ql:j:<jid> (due scheduled jobs are promoted first)
  -- reply: JSON list of every queue's counts object ([] when none)
  -- errors: none
  ['queues.counts'] = function(now, a) return json_array(Queue.all_counts(RELESS, now)) end,
  --- queues.names
  -- args: none
  -- reads: ql:queues
  -- writes: none
  -- reply: JSON list of the queue names ([] when none)
  -- errors: none
  ['queues.names'] = function(now, a) return json_array(Queue.names()) end,
} end

GROUPS['queueIdentifierPatterns'] = function() return {
  --- queueIdentifierPatterns.getAll
  -- args: none
  -- reads: ql:qp:identifiers, qmore:dynamic (legacy, standard prefix only)
  -- writes: none
  -- reply: JSON object: name -> JSON list text of patterns (default ["*"])
  -- errors: none
  ['queueIdentifierPatterns.getAll'] = function(now, a) return json(Patterns.identifiers()) end,
  --- queueIdentifierPatterns.setAll
  -- args: [name, patterns]...
  -- reads: none
  -- writes: ql:qp:identifiers, qmore:dynamic (deleted)
  -- reply: nil
  -- errors: Odd number of identifier patterns: <n> arguments;
  --    queueIdentifierPatterns.setAll(): patterns of "<name>" must be a JSON list; cjson
  ['queueIdentifierPatterns.setAll'] = function(now, a) Patterns.set_identifiers(a) end,
} end

GROUPS['queuePriorityPatterns'] = function() return {
  --- queuePriorityPatterns.getAll
  -- args: none
  -- reads: ql:qp:priorities, qmore:priority (legacy, standard prefix only)
  -- writes: none
  -- reply: JSON list of the pattern objects' texts (a default one when none)
  -- errors: none
  ['queuePriorityPatterns.getAll'] = function(now, a) return json(Patterns.priorities()) end,
  --- queuePriorityPatterns.setAll
  -- args: [pattern]...
  -- reads: none
  -- writes: ql:qp:priorities, qmore:priority (deleted)
  -- reply: nil
  -- errors: queuePriorityPatterns.setAll(): each pattern must be a JSON object with a "pattern";
  --    cjson
  ['queuePriorityPatterns.setAll'] = function(now, a) Patterns.set_priorities(a) end,
} end

GROUPS['recurringJob'] = function() return {
  -- contract: see unrecur
  ['recurringJob.cancel'] = function(now, a) return Recurring.cancel(a[1]) end,
  -- contract: see recur.get
  ['recurringJob.get'] = function(now, a)
    return object_or_nil(Recurring.object(RELESS, a[1]))
  end,
  -- contract: see recur.tag
  ['recurringJob.addTag'] = function(now, a)
    return Recurring.add_tags(RELESS, a[1], rest(a, 2))
  end,
  -- contract: see recur.untag
  ['recurringJob.removeTag'] = function(now, a)
    return Recurring.remove_tags(RELESS, a[1], rest(a, 2))
  end,
  -- contract: see recur.update
  ['recurringJob.update'] = function(now, a) return Recurring.update(RELESS, now, a) end,
  --- recurringJob.setCron
  -- args: jid, cron, tz, refill, time...
  --    (aqless's own: the template spawns at these unix times, the first next; see cron.lua)
  -- reads: ql:r:<jid>
  -- writes: ql:r:<jid>, ql:cron:<jid>, ql:crons, ql:q:<q>-recur
  -- reply: 1
  -- errors: Recurring(): no jid provided; Cron(): Arg "cron" missing;
  --    Cron(): Arg "tz" missing; Cron(): Arg "refill" not a number: <refill>;
  --    Cron(): Arg "time" not a number: <time>; Cron(): no fire time given;
  --    Recur(): No recurring job <jid>
  ['recurringJob.setCron'] = function(now, a) return Cron.set(a) end,
  --- recurringJob.extendCron
  -- args: jid, cron, tz, refill, time...
  --    (aqless's own: adds fire times if the template still has this cron and tz)
  -- reads: ql:r:<jid>, ql:q:<q>-recur
  -- writes: ql:cron:<jid>, ql:crons
  -- reply: 1, or 0 for a template whose cron or tz changed (nothing written)
  -- errors: as recurringJob.setCron
  ['recurringJob.extendCron'] = function(now, a) return Cron.extend(a) end,
  --- recurringJob.cronRefills
  -- args: lease
  --    (aqless's own: claims the cron schedules due for topping up for `lease` seconds)
  -- reads: ql:crons, ql:r:<jid>, ql:cron:<jid>, ql:q:<q>-recur
  -- writes: ql:crons
  -- reply: [[jid, cron, tz, last fire time]...] (JSON)
  -- errors: Cron(): Arg "lease" not a positive number: <lease>
  ['recurringJob.cronRefills'] = function(now, a) return Cron.refills(now, a[1]) end,
  --- recurringJob.nextRuns
  -- args: jid, count
  --    (aqless's own: the next spawn times, from the schedule or by interval)
  -- reads: ql:r:<jid>, ql:q:<q>-recur, ql:cron:<jid>
  -- writes: none
  -- reply: [unix time...] (JSON; [] for no such template)
  -- errors: Recurring(): no jid provided; Cron(): Arg "count" not a positive number: <count>
  ['recurringJob.nextRuns'] = function(now, a) return Cron.next_runs(a[1], a[2]) end,
} end

GROUPS['throttle'] = function() return {
  --- throttle.delete
  -- args: tid
  -- reads: none
  -- writes: ql:th:<tid> (deleted)
  -- reply: nil
  -- errors: Throttle(): no tid provided
  ['throttle.delete'] = function(now, a)
    local tid = a[1]
    tid_given(tid)
    Throttle.delete(tid)
  end,
  --- throttle.get
  -- args: tid
  -- reads: ql:th:<tid>
  -- writes: none
  -- reply: {"id": tid, "maximum": n, "ttl": seconds} (JSON)
  -- errors: Throttle(): no tid provided
  ['throttle.get'] = function(now, a)
    local tid = a[1]
    tid_given(tid)
    return json(Throttle.info(tid))
  end,
  --- throttle.locks
  -- args: tid
  -- reads: ql:th:<tid>-locks
  -- writes: none
  -- reply: JSON list of the jids holding a slot ([] when none)
  -- errors: Throttle(): no tid provided
  ['throttle.locks'] = function(now, a)
    local tid = a[1]
    tid_given(tid)
    return json_array(Throttle.locks(tid))
  end,
  --- throttle.pending
  -- args: tid
  -- reads: ql:th:<tid>-pending
  -- writes: none
  -- reply: JSON list of the jids waiting for a slot ([] when none)
  -- errors: Throttle(): no tid provided
  ['throttle.pending'] = function(now, a)
    local tid = a[1]
    tid_given(tid)
    return json_array(Throttle.pending(tid))
  end,
  --- throttle.release
  -- args: tid, jid...
  -- reads: throttles, ql:j:<jid>
  -- writes: ql:th:<tid>-locks|-pending, ql:q:<q>-throttled|work
  -- reply: nil
  -- errors: Throttle(): no tid provided
  ['throttle.release'] = function(now, a)
    local tid = a[1]
    tid_given(tid)
    for _, jid in ipairs(rest(a, 2)) do Throttle.release(tid, jid, now) end
  end,
  --- throttle.set
  -- args: tid, maximum, [expiration]
  -- reads: none
  -- writes: ql:th:<tid>
  -- reply: nil
  -- errors: Throttle(): no tid provided; Throttle(): Arg "maximum" not a number: <maximum>;
  --    Throttle(): Arg "expiration" not a number: <expiration>
  ['throttle.set'] = function(now, a)
    local tid, maximum, expiration = a[1], a[2], a[3]
    throttle_set(tid, maximum, expiration)
  end,
} end

GROUPS['workers'] = function() return {
  --- workers.counts
  -- args: none
  -- reads: ql:config, ql:workers, ql:w:<worker>:jobs
  -- writes: ql:workers, ql:w:<worker>:jobs (workers idle past max-worker-age are dropped)
  -- reply: JSON list of every worker's {"name", "jobs": n, "stalled": n} ([] when none)
  -- errors: none
  ['workers.counts'] = function(now, a) return json_array(Worker.counts(now)) end,
} end

-- aqless's own: rate limits (ratelimit.lua). `rate limits` is ql:rl:<id>, ql:rl:<id>-starts
-- and ql:rate_limits; a queue's limiter id is its throttle id, ql:q:<q>.
GROUPS['rateLimit'] = function() return {
  --- rateLimit.all
  -- args: none
  -- reads: rate limits
  -- writes: ql:rl:<id>-starts (trimmed to the window)
  -- reply: JSON list of every limiter's {"id", "limit", "period", "used", "wait"} ([] if none)
  -- errors: none
  ['rateLimit.all'] = function(now, a) return json_array(RateLimit.all(now)) end,
  --- rateLimit.delete
  -- args: id
  -- reads: none
  -- writes: rate limits
  -- reply: nil
  -- errors: RateLimit(): no id provided
  ['rateLimit.delete'] = function(now, a) RateLimit.delete(a[1]) end,
  --- rateLimit.get
  -- args: id
  -- reads: rate limits
  -- writes: ql:rl:<id>-starts (trimmed to the window)
  -- reply: {"id", "limit", "period", "used": starts in the window, "wait": seconds until the
  --    next free start} (JSON; limit 0 when the id has none)
  -- errors: RateLimit(): no id provided
  ['rateLimit.get'] = function(now, a) return json(RateLimit.info(a[1], now)) end,
  --- rateLimit.pop
  -- args: queue, worker, limit, [data_apart]
  -- reads: as queue.pop, rate limits, ql:q:<q>-scheduled
  -- writes: as queue.pop, ql:rl:<id>-starts
  -- reply: {"jobs": queue.pop's reply, "wait": seconds until a rate limit that held the pop
  --    back has a free start or, when it took fewer jobs than it could, until the queue's
  --    next scheduled job is due; null when neither, "held": whether a rate limit held the
  --    pop back, or the next scheduled job names one} (JSON); with data_apart (aqless's
  --    own), a list: that JSON text with no "data" in the job objects, then each job's
  --    stored data text as it is, in the order of the jobs
  -- errors: as pop
  ['rateLimit.pop'] = function(now, a)
    local queue, worker, limit = a[1], a[2], a[3]
    local apart = nil
    if a[4] == DATA_APART then apart = {''} end
    local jobs = Queue.pop(RELESS, now, queue, worker, limit, apart)
    RateLimit.note_scheduled(queue, now)
    local reply = '{"jobs":' .. jobs .. ',"wait":' .. cjson.encode(RateLimit.wait or cjson.null)
      .. ',"held":' .. tostring(RateLimit.held) .. '}'
    if apart == nil then return reply end
    apart[1] = reply
    return apart
  end,
  --- rateLimit.set
  -- args: id, limit, period
  -- reads: none
  -- writes: ql:rl:<id>, ql:rate_limits
  -- reply: nil
  -- errors: RateLimit(): no id provided;
  --    RateLimit(): Arg "limit" not a number of at least 1: <limit>;
  --    RateLimit(): Arg "period" not a number of seconds above 0: <period>
  ['rateLimit.set'] = function(now, a) RateLimit.set(a[1], a[2], a[3]) end,
} end
