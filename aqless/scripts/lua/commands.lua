-- The command table: every command name of both vocabularies, mapped to the core with its
-- dialect. `a` holds the arguments after `now` (a.n of them).
--
-- Each command's contract (arguments, keys, reply, errors and the exception each error
-- becomes) sits beside the function that implements it, in that function's module, as a
-- `--[=[ <command> | <twin>` block; aqless/scripts/contracts.py describes and reads them.

-- The commands' own helpers, in one table: every top-level local of a module counts
-- towards the one chunk's limit of 200 (tests/scripts/test_locals.py).
local Helpers = {}

function Helpers.json(value) return cjson.encode(value) end

-- An optional argument that aqless's own calls may pass as '' (absent) to reach the
-- `attempt` after it (see Job.check_attempt); other clients send no such argument, and
-- never reach that far.
function Helpers.given(value)
  if value == '' then return nil end
  return value
end

function Helpers.object_or_nil(value)
  if value == nil then return nil end
  return cjson.encode(value)
end

function Helpers.failed_page(start, limit)
  return Queue.page(start, limit, 25, 'Failed(): Arg "start" is not a number: ',
    'Failed(): Arg "limit" is not a number: ')
end

function Helpers.jobs_page(D, offset, count)
  return Queue.page(offset, count, 25, 'Jobs(): Arg "offset" not a number: ',
    say(D.errors.jobs_count, {value = ''}))
end

function Helpers.tag_page(D, offset, count)
  return Queue.page(offset, count, 25, 'Tag(): Arg "offset" not a number: ',
    say(D.errors.tag_count, {value = ''}))
end

function Helpers.tagged(D, tag, offset, count)
  check(tag, 'Tag(): Arg "tag" missing')
  local first, n = Helpers.tag_page(D, offset, count)
  return Helpers.json(Tags.tagged(tag, first, n))
end

function Helpers.top_tags(D, offset, count)
  local first, n = Helpers.tag_page(D, offset, count)
  return D.list(Tags.top(first, n))
end

function Helpers.jobs_by_state(D, now, state, queue, offset, count)
  check(queue, 'Jobs(): Arg "queue" missing')
  local first, n = Helpers.jobs_page(D, offset, count)
  return Queue.jobs_by_state(D, now, state, queue, first, n)
end

function Helpers.stats(now, queue, date)
  check(queue, 'Queue(): no queue name provided')
  local day = number(date)
  check(day, 'Stats(): Arg "date" missing or not a number: ' .. tostring(date))
  return Helpers.json(Stats.of_day(queue, day))
end

function Helpers.config_set(option, value)
  check(option, 'config.set(): Arg "option" missing')
  check(value, 'config.set(): Arg "value" missing')
  Config.check(option, value)
  Events.config_set(option, value)
  Config.set(option, value)
end

function Helpers.config_unset(option)
  check(option, 'config.unset(): Arg "option" missing')
  Events.config_unset(option)
  Config.unset(option)
end

function Helpers.tid_given(tid) check(tid, 'Throttle(): no tid provided') end

function Helpers.throttle_set(tid, maximum, expiration)
  Helpers.tid_given(tid)
  local limit = number(maximum)
  check(limit, 'Throttle(): Arg "maximum" not a number: ' .. tostring(maximum))
  if limit < 0 then raise('Throttle(): Arg "maximum" must not be negative: ' .. maximum) end
  local seconds = optional_number(expiration, 0, 'Throttle(): Arg "expiration" not a number: ')
  Throttle.set(tid, maximum, math.min(whole(seconds), 2 ^ 31))
  Throttle.index_add(tid)
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
  ['put'] = function(now, a) return Job.put(CLASSIC, now, a) end,
  ['requeue'] = function(now, a) return Job.requeue(CLASSIC, now, a) end,
  ['pop'] = function(now, a)
    local queue, worker, count = a[1], a[2], a[3]
    return Queue.pop(CLASSIC, now, queue, worker, count)
  end,
  ['peek'] = function(now, a)
    local queue, count = a[1], a[2]
    return Queue.peek(CLASSIC, now, queue, count)
  end,
  ['complete'] = function(now, a)
    local jid, worker, queue, data = a[1], a[2], a[3], a[4]
    return Job.complete(CLASSIC, now, jid, worker, queue, data, options(a, 5))
  end,
  ['fail'] = function(now, a)
    local jid, worker, group, message, data = a[1], a[2], a[3], a[4], a[5]
    return Job.fail(CLASSIC, now, jid, worker, group, message, data)
  end,
  ['retry'] = function(now, a)
    local jid, queue, worker, delay, group, message = a[1], a[2], a[3], a[4], a[5], a[6]
    return Job.retry(CLASSIC, now, jid, queue, worker, delay, group, message)
  end,
  ['heartbeat'] = function(now, a)
    local jid, worker, data = a[1], a[2], a[3]
    return Job.heartbeat(CLASSIC, now, jid, worker, data)
  end,
  ['timeout'] = function(now, a) Job.timeout(CLASSIC, now, rest(a, 1)) end,
  ['cancel'] = function(now, a) return Job.cancel(CLASSIC, now, rest(a, 1)) end,
  ['depends'] = function(now, a)
    local jid, command = a[1], a[2]
    return Job.depends(CLASSIC, now, jid, command, rest(a, 3))
  end,
  ['priority'] = function(now, a)
    local jid, priority = a[1], a[2]
    return Job.set_priority(CLASSIC, now, jid, priority)
  end,
  ['get'] = function(now, a)
    local jid = a[1]
    check(jid, 'Job(): no jid provided')
    return Job.json(CLASSIC, jid)
  end,
  ['multiget'] = function(now, a) return Job.list_json(CLASSIC, rest(a, 1)) end,
  ['log'] = function(now, a)
    local jid, message, data = a[1], a[2], a[3]
    Job.log(CLASSIC, now, jid, message, data)
  end,
  ['track'] = function(now, a)
    if a.n == 0 then return Job.tracked(CLASSIC) end
    local action, jid = a[1], a[2]
    return Job.track(CLASSIC, now, action, jid)
  end,
  ['tag'] = function(now, a)
    local command = a[1]
    check(command, 'Tag(): Arg "command" must be "add", "remove", "get" or "top"')
    if command == 'add' then return Job.add_tags(CLASSIC, now, a[2], rest(a, 3)) end
    if command == 'remove' then return Job.remove_tags(CLASSIC, now, a[2], rest(a, 3)) end
    if command == 'get' then return Helpers.tagged(CLASSIC, a[2], a[3], a[4]) end
    if command == 'top' then return Helpers.top_tags(CLASSIC, a[2], a[3]) end
    raise('Tag(): First argument must be "add", "remove" or "get"')
  end,
  ['failed'] = function(now, a)
    local group = a[1]
    if group == nil then return Helpers.json(Queue.failure_groups()) end
    local start, limit = Helpers.failed_page(a[2], a[3])
    return Helpers.json(Queue.failed_in_group(group, start, limit))
  end,
  ['unfail'] = function(now, a)
    local queue, group, count = a[1], a[2], a[3]
    return Queue.unfail(CLASSIC, now, queue, group, count)
  end,
  ['jobs'] = function(now, a)
    local state = a[1]
    check(state, 'Jobs(): Arg "state" missing')
    if state == 'complete' then return Queue.completed(Helpers.jobs_page(CLASSIC, a[2], a[3])) end
    return Helpers.jobs_by_state(CLASSIC, now, state, a[2], a[3], a[4])
  end,
  ['queues'] = function(now, a)
    local queue = a[1]
    if queue ~= nil then return Helpers.json(Queue.counts(CLASSIC, now, queue)) end
    return Helpers.json(Queue.all_counts(CLASSIC, now))
  end,
  ['length'] = function(now, a) return Queue.length(now, a[1]) end,
  ['pause'] = function(now, a) Queue.pause(rest(a, 1)) end,
  ['unpause'] = function(now, a) Queue.unpause(rest(a, 1)) end,
  ['stats'] = function(now, a)
    local queue, date = a[1], a[2]
    return Helpers.stats(now, queue, date)
  end,
  ['workers'] = function(now, a)
    local worker = a[1]
    if worker ~= nil then return Helpers.json(Worker.jobs(now, worker)) end
    return Helpers.json(Worker.counts(now))
  end,
  ['recur'] = function(now, a) return Recurring.recur(CLASSIC, now, a) end,
  ['unrecur'] = function(now, a) return Recurring.cancel(a[1]) end,
} end

GROUPS['queue'] = function() return {
  ['queue.failedJobs'] = function(now, a) return Helpers.json(Queue.failed_of(a[1], a[2], a[3], a[4], a[5], a[6])) end,
  ['queue.forget'] = function(now, a) Queue.forget(rest(a, 1)) end,
  ['queue.counts'] = function(now, a)
    local queue = a[1]
    if queue ~= nil then return Helpers.json(Queue.counts(REQLESS, now, queue)) end
    return Helpers.json(Queue.all_counts(REQLESS, now))
  end,
  ['queue.jobsByState'] = function(now, a)
    local state = a[1]
    check(state, 'Jobs(): Arg "state" missing')
    if state == 'complete' then
      return json_array(Queue.completed(Helpers.jobs_page(REQLESS, a[2], a[3])))
    end
    return json_array(Helpers.jobs_by_state(REQLESS, now, state, a[2], a[3], a[4]))
  end,
  ['queue.length'] = function(now, a) return Queue.length(now, a[1]) end,
  ['queue.pause'] = function(now, a) Queue.pause(rest(a, 1)) end,
  ['queue.unpause'] = function(now, a) Queue.unpause(rest(a, 1)) end,
  ['queue.peek'] = function(now, a)
    local queue, offset, limit = a[1], a[2], a[3]
    return Queue.peek_range(REQLESS, now, queue, offset, limit)
  end,
  ['queue.pop'] = function(now, a)
    local queue, worker, limit = a[1], a[2], a[3]
    return Queue.pop(REQLESS, now, queue, worker, limit)
  end,
  ['queue.popAfter'] = function(now, a) return Queue.pop_after(now, a, find_command) end,
  ['queue.put'] = function(now, a) return Job.put(REQLESS, now, a) end,
  ['queue.putDeduplicated'] = function(now, a) return Dedup.put(REQLESS, now, a) end,
  ['queue.putNew'] = function(now, a) return Job.put_new(REQLESS, now, a) end,
  ['queue.recurAtInterval'] = function(now, a) return Recurring.recur(REQLESS, now, a) end,
  ['queue.upsertRecurring'] = function(now, a) return Recurring.upsert(REQLESS, now, a) end,
  ['queue.stats'] = function(now, a)
    local queue, date = a[1], a[2]
    return Helpers.stats(now, queue, date)
  end,
  ['queue.throttle.get'] = function(now, a)
    local queue = a[1]
    check(queue, 'Queue(): no queue name provided')
    return Helpers.json(Throttle.info(Keys.queue_throttle(queue)))
  end,
  ['queue.throttle.set'] = function(now, a)
    local queue, maximum = a[1], a[2]
    check(queue, 'Queue(): no queue name provided')
    Helpers.throttle_set(Keys.queue_throttle(queue), maximum, nil)
  end,
  ['queue.unfail'] = function(now, a)
    local queue, group, count = a[1], a[2], a[3]
    return Queue.unfail(REQLESS, now, queue, group, count)
  end,
} end

GROUPS['worker'] = function() return {
  ['worker.deregister'] = function(now, a) Worker.forget(rest(a, 1)) end,
  ['worker.forget'] = function(now, a) Worker.forget(rest(a, 1)) end,
  ['worker.offer'] = function(now, a)
    local worker, slots, seconds = a[1], a[2], a[3]
    return Worker.offer(now, worker, slots, seconds, rest(a, 4))
  end,
  ['worker.withdraw'] = function(now, a) Worker.withdraw(a[1], rest(a, 2)) end,
  ['worker.takeBack'] = function(now, a) return Worker.take_back(now, a[1], rest(a, 2)) end,
  ['worker.jobs'] = function(now, a)
    local worker = a[1]
    if worker ~= nil then return Helpers.json(Worker.jobs(now, worker)) end
    return Helpers.json(Worker.counts(now))
  end,
} end

GROUPS['config'] = function() return {
  ['config.get'] = function(now, a)
    local option = a[1]
    if option == nil then return Helpers.json(Config.all(CLASSIC)) end
    return Config.get(option)
  end,
  ['config.set'] = function(now, a)
    local option, value = a[1], a[2]
    Helpers.config_set(option, value)
  end,
  ['config.unset'] = function(now, a) Helpers.config_unset(a[1]) end,
  ['config.getAll'] = function(now, a) return Helpers.json(Config.all(REQLESS)) end,
} end

GROUPS['recur'] = function() return {
  ['recur.get'] = function(now, a)
    return Helpers.object_or_nil(Recurring.object(CLASSIC, a[1]))
  end,
  ['recur.update'] = function(now, a) return Recurring.update(CLASSIC, now, a) end,
  ['recur.tag'] = function(now, a) return Recurring.add_tags(CLASSIC, a[1], rest(a, 2)) end,
  ['recur.untag'] = function(now, a) return Recurring.remove_tags(CLASSIC, a[1], rest(a, 2)) end,
} end

GROUPS['failureGroups'] = function() return {
  ['failureGroups.counts'] = function(now, a)
    local start, limit = a[1], a[2]
    Helpers.failed_page(start, limit)
    return Helpers.json(Queue.failure_groups())
  end,
} end

GROUPS['jobs'] = function() return {
  ['jobs.failedByGroup'] = function(now, a)
    local group = a[1]
    if group == nil then return Helpers.json(Queue.failure_groups()) end
    local start, limit = Helpers.failed_page(a[2], a[3])
    return Helpers.json(Queue.failed_in_group(group, start, limit))
  end,
  ['jobs.tagged'] = function(now, a)
    local tag, offset, limit = a[1], a[2], a[3]
    return Helpers.tagged(REQLESS, tag, offset, limit)
  end,
  ['jobs.completed'] = function(now, a)
    local offset, limit = a[1], a[2]
    return json_array(Queue.completed(Helpers.jobs_page(REQLESS, offset, limit)))
  end,
  ['jobs.progress'] = function(now, a) return Progress.of(rest(a, 1)) end,
  ['jobs.checkpoints'] = function(now, a) return Checkpoint.of(rest(a, 1)) end,
  ['jobs.tracked'] = function(now, a) return Job.tracked(REQLESS) end,
} end

GROUPS['job'] = function() return {
  ['job.addDependency'] = function(now, a)
    local jid = a[1]
    return Job.depends(REQLESS, now, jid, 'on', rest(a, 2))
  end,
  ['job.removeDependency'] = function(now, a)
    local jid = a[1]
    return Job.depends(REQLESS, now, jid, 'off', rest(a, 2))
  end,
  ['job.addTag'] = function(now, a)
    local jid = a[1]
    return Job.add_tags(REQLESS, now, jid, rest(a, 2))
  end,
  ['job.removeTag'] = function(now, a)
    local jid = a[1]
    return Job.remove_tags(REQLESS, now, jid, rest(a, 2))
  end,
  ['job.cancel'] = function(now, a) return Job.cancel(REQLESS, now, rest(a, 1)) end,
  ['job.checkpoint'] = function(now, a)
    local jid, worker, state = a[1], a[2], a[3]
    return Checkpoint.write(now, jid, worker, state, a[4])
  end,
  ['job.complete'] = function(now, a)
    local jid, worker, queue, data = a[1], a[2], a[3], a[4]
    -- aqless's worker sends the attempt as the last option pair: taken off first, the
    -- options are what they were without it (often none: no table made)
    local attempt = nil
    if a.n >= 6 and a.n % 2 == 0 and a[a.n - 1] == 'attempt' then
      attempt, a[a.n - 1], a[a.n], a.n = a[a.n], nil, nil, a.n - 2
    end
    -- and keep_data before it, the same way (a job whose code left its data alone)
    local keep = false
    if a.n >= 6 and a.n % 2 == 0 and a[a.n - 1] == 'keep_data' then
      keep, a[a.n - 1], a[a.n], a.n = true, nil, nil, a.n - 2
    end
    local o = options(a, 5)
    keep = keep or o.keep_data ~= nil
    attempt = attempt or o.attempt
    if o ~= NOTHING then o = {result = o.result, result_dropped = o.result_dropped} end
    return Job.complete(REQLESS, now, jid, worker, queue, data, o, keep, attempt)
  end,
  ['job.completeAndRequeue'] = function(now, a)
    local jid, worker, queue, data, next_queue = a[1], a[2], a[3], a[4], a[5]
    local o = options(a, 6)
    if o == NOTHING then o = {} end
    o.next = next_queue
    local attempt = o.attempt
    o.attempt = nil
    return Job.complete(REQLESS, now, jid, worker, queue, data, o, o.keep_data ~= nil, attempt)
  end,
  ['job.fail'] = function(now, a)
    local jid, worker, group, message, data = a[1], a[2], a[3], a[4], a[5]
    if a[6] ~= nil then data = Helpers.given(data) end
    return Job.fail(REQLESS, now, jid, worker, group, message, data, a[6])
  end,
  ['job.handBack'] = function(now, a)
    local jid, worker, reason, attempt = a[1], a[2], a[3], a[4]
    return Job.hand_back(now, jid, worker, reason, attempt)
  end,
  ['job.result'] = function(now, a) return Results.json(a[1]) end,
  ['job.dedup'] = function(now, a) return Dedup.id_of(a[1]) end,
  ['job.get'] = function(now, a)
    local jid = a[1]
    check(jid, 'Job(): no jid provided')
    return Job.json(REQLESS, jid)
  end,
  ['job.getMulti'] = function(now, a) return Job.list_json(REQLESS, rest(a, 1)) end,
  ['job.heartbeat'] = function(now, a)
    local jid, worker, data = a[1], a[2], a[3]
    if a[4] ~= nil then data = Helpers.given(data) end
    return Job.heartbeat(REQLESS, now, jid, worker, data, a[4])
  end,
  ['job.progress'] = function(now, a)
    local jid, worker, fraction, message = a[1], a[2], a[3], a[4]
    Progress.report(now, jid, worker, fraction, message, a[5])
  end,
  ['job.log'] = function(now, a)
    local jid, message, data = a[1], a[2], a[3]
    Job.log(REQLESS, now, jid, message, data)
  end,
  ['job.requeue'] = function(now, a) return Job.requeue(REQLESS, now, a) end,
  ['job.retry'] = function(now, a)
    local jid, queue, worker, delay, group, message = a[1], a[2], a[3], a[4], a[5], a[6]
    if a[7] ~= nil then group, message = Helpers.given(group), Helpers.given(message) end
    return Job.retry(REQLESS, now, jid, queue, worker, delay, group, message, a[7])
  end,
  ['job.setPriority'] = function(now, a)
    local jid, priority = a[1], a[2]
    return Job.set_priority(REQLESS, now, jid, priority)
  end,
  ['job.timeout'] = function(now, a) Job.timeout(REQLESS, now, rest(a, 1)) end,
  ['job.track'] = function(now, a) return Job.track(REQLESS, now, 'track', a[1]) end,
  ['job.untrack'] = function(now, a) return Job.track(REQLESS, now, 'untrack', a[1]) end,
} end

-- aqless's own: batches (batches.lua).
GROUPS['batch'] = function() return {
  ['batch.put'] = function(now, a) return Batch.put(now, a) end,
  ['batch.get'] = function(now, a) return Batch.get(now, a[1]) end,
  ['batch.list'] = function(now, a) return Batch.list(now, a[1], a[2]) end,
} end

-- aqless's own: flows (flows.lua)
GROUPS['flow'] = function() return {
  ['flow.put'] = function(now, a) return Flows.put(now, a[1], a[2]) end,
  ['flow.children'] = function(now, a) return Flows.children(a[1]) end,
  ['flow.tree'] = function(now, a) return Flows.tree(a[1]) end,
} end

GROUPS['tags'] = function() return {
  ['tags.top'] = function(now, a)
    local offset, limit = a[1], a[2]
    return Helpers.top_tags(REQLESS, offset, limit)
  end,
} end

GROUPS['queues'] = function() return {
  ['queues.counts'] = function(now, a) return json_array(Queue.all_counts(REQLESS, now)) end,
  ['queues.names'] = function(now, a) return json_array(Queue.names()) end,
} end

GROUPS['queueIdentifierPatterns'] = function() return {
  ['queueIdentifierPatterns.getAll'] = function(now, a)
    return Helpers.json(Patterns.identifiers())
  end,
  ['queueIdentifierPatterns.setAll'] = function(now, a) Patterns.set_identifiers(a) end,
} end

GROUPS['queuePriorityPatterns'] = function() return {
  ['queuePriorityPatterns.getAll'] = function(now, a)
    return Helpers.json(Patterns.priorities())
  end,
  ['queuePriorityPatterns.setAll'] = function(now, a) Patterns.set_priorities(a) end,
} end

GROUPS['recurringJob'] = function() return {
  ['recurringJob.getMulti'] = function(now, a) return Recurring.get_many(REQLESS, rest(a, 1)) end,
  ['recurringJob.cancel'] = function(now, a) return Recurring.cancel(a[1]) end,
  ['recurringJob.get'] = function(now, a)
    return Helpers.object_or_nil(Recurring.object(REQLESS, a[1]))
  end,
  ['recurringJob.addTag'] = function(now, a)
    return Recurring.add_tags(REQLESS, a[1], rest(a, 2))
  end,
  ['recurringJob.removeTag'] = function(now, a)
    return Recurring.remove_tags(REQLESS, a[1], rest(a, 2))
  end,
  ['recurringJob.update'] = function(now, a) return Recurring.update(REQLESS, now, a) end,
  ['recurringJob.setCron'] = function(now, a) return Cron.set(a) end,
  ['recurringJob.extendCron'] = function(now, a) return Cron.extend(a) end,
  ['recurringJob.cronRefills'] = function(now, a) return Cron.refills(now, a[1]) end,
  ['recurringJob.nextRuns'] = function(now, a) return Cron.next_runs(a[1], a[2]) end,
} end

GROUPS['throttle'] = function() return {
  ['throttle.all'] = function(now, a) return json_array(Throttle.all()) end,
  ['throttle.index'] = function(now, a) return Throttle.adopt(rest(a, 1)) end,
  ['throttle.delete'] = function(now, a)
    local tid = a[1]
    Helpers.tid_given(tid)
    Throttle.delete(tid)
    Throttle.index_remove(tid)
  end,
  ['throttle.get'] = function(now, a)
    local tid = a[1]
    Helpers.tid_given(tid)
    return Helpers.json(Throttle.info(tid))
  end,
  ['throttle.locks'] = function(now, a)
    local tid = a[1]
    Helpers.tid_given(tid)
    return json_array(Throttle.locks(tid))
  end,
  ['throttle.pending'] = function(now, a)
    local tid = a[1]
    Helpers.tid_given(tid)
    return json_array(Throttle.pending(tid))
  end,
  ['throttle.release'] = function(now, a)
    local tid = a[1]
    Helpers.tid_given(tid)
    for _, jid in ipairs(rest(a, 2)) do Throttle.release(tid, jid, now) end
  end,
  ['throttle.set'] = function(now, a)
    local tid, maximum, expiration = a[1], a[2], a[3]
    Helpers.throttle_set(tid, maximum, expiration)
  end,
} end

GROUPS['workers'] = function() return {
  ['workers.counts'] = function(now, a) return json_array(Worker.counts(now)) end,
} end

-- aqless's own: rate limits (ratelimit.lua). `rate limits` is ql:rl:<id>, ql:rl:<id>-starts
-- and ql:rate_limits; a queue's limiter id is its throttle id, ql:q:<q>.
GROUPS['rateLimit'] = function() return {
  ['rateLimit.all'] = function(now, a) return json_array(RateLimit.all(now)) end,
  ['rateLimit.delete'] = function(now, a) RateLimit.delete(a[1]) end,
  ['rateLimit.get'] = function(now, a) return Helpers.json(RateLimit.info(a[1], now)) end,
  ['rateLimit.pop'] = function(now, a)
    local queue, worker, limit = a[1], a[2], a[3]
    local apart = nil
    if a[4] == DATA_APART then apart = {''} end
    local jobs = Queue.pop(REQLESS, now, queue, worker, limit, apart)
    RateLimit.note_scheduled(queue, now)
    local reply = '{"jobs":' .. jobs .. ',"wait":' .. cjson.encode(RateLimit.wait or cjson.null)
      .. ',"held":' .. tostring(RateLimit.held) .. '}'
    if apart == nil then return reply end
    apart[1] = reply
    return apart
  end,
  ['rateLimit.set'] = function(now, a) RateLimit.set(a[1], a[2], a[3], a[4]) end,
} end

-- aqless's own: fair groups inside a queue (groups.lua).
GROUPS['group'] = function() return {
  ['group.counts'] = function(now, a) return json_array(Groups.counts(a[1], now)) end,
  ['group.set'] = function(now, a) Groups.set(a[1], a[2], a) end,
} end
