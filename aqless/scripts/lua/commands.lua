-- The command table: every command name of both vocabularies, mapped to the core with its
-- dialect. `a` holds the arguments after `now` (a.n of them).

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

GROUPS[''] = function() return {
  ['put'] = function(now, a) return Job.put(CLASSIC, now, a) end,
  ['requeue'] = function(now, a) return Job.requeue(CLASSIC, now, a) end,
  ['pop'] = function(now, a) return Queue.pop(CLASSIC, now, a[1], a[2], a[3]) end,
  ['peek'] = function(now, a) return Queue.peek(CLASSIC, now, a[1], a[2]) end,
  ['complete'] = function(now, a)
    return Job.complete(CLASSIC, now, a[1], a[2], a[3], a[4], options(a, 5))
  end,
  ['fail'] = function(now, a) return Job.fail(CLASSIC, now, a[1], a[2], a[3], a[4], a[5]) end,
  ['retry'] = function(now, a)
    return Job.retry(CLASSIC, now, a[1], a[2], a[3], a[4], a[5], a[6])
  end,
  ['heartbeat'] = function(now, a) return Job.heartbeat(CLASSIC, now, a[1], a[2], a[3]) end,
  ['timeout'] = function(now, a) Job.timeout(CLASSIC, now, rest(a, 1)) end,
  ['cancel'] = function(now, a) return Job.cancel(CLASSIC, now, rest(a, 1)) end,
  ['depends'] = function(now, a) return Job.depends(CLASSIC, now, a[1], a[2], rest(a, 3)) end,
  ['priority'] = function(now, a) return Job.set_priority(CLASSIC, now, a[1], a[2]) end,
  ['get'] = function(now, a)
    check(a[1], 'Job(): no jid provided')
    return Job.json(CLASSIC, a[1])
  end,
  ['multiget'] = function(now, a) return Job.list_json(CLASSIC, rest(a, 1)) end,
  ['log'] = function(now, a) Job.log(CLASSIC, now, a[1], a[2], a[3]) end,
  ['track'] = function(now, a)
    if a.n == 0 then return Job.tracked(CLASSIC) end
    return Job.track(CLASSIC, now, a[1], a[2])
  end,
  ['tag'] = function(now, a)
    local command = a[1]
    check(command, 'Tag(): Arg "command" must be "add", "remove", "get" or "top"')
    if command == 'add' then return Job.add_tags(CLASSIC, now, a[2], rest(a, 3)) end
    if command == 'remove' then return Job.remove_tags(CLASSIC, now, a[2], rest(a, 3)) end
    if command == 'get' then return tagged(CLASSIC, a[2], a[3], a[4]) end
    if command == 'top' then return top_tags(CLASSIC, a[2], a[3]) end
    raise('Tag(): First argument must be "add", "remove" or "get"')
  end,
  ['failed'] = function(now, a)
    if a[1] == nil then return json(Queue.failure_groups()) end
    local start, limit = failed_page(a[2], a[3])
    return json(Queue.failed_in_group(a[1], start, limit))
  end,
  ['unfail'] = function(now, a) return Queue.unfail(CLASSIC, now, a[1], a[2], a[3]) end,
  ['jobs'] = function(now, a)
    check(a[1], 'Jobs(): Arg "state" missing')
    if a[1] == 'complete' then return Queue.completed(jobs_page(CLASSIC, a[2], a[3])) end
    return jobs_by_state(CLASSIC, now, a[1], a[2], a[3], a[4])
  end,
  ['queues'] = function(now, a)
    if a[1] ~= nil then return json(Queue.counts(CLASSIC, now, a[1])) end
    return json(Queue.all_counts(CLASSIC, now))
  end,
  ['length'] = function(now, a) return Queue.length(now, a[1]) end,
  ['pause'] = function(now, a) Queue.pause(rest(a, 1)) end,
  ['unpause'] = function(now, a) Queue.unpause(rest(a, 1)) end,
  ['stats'] = function(now, a) return stats(now, a[1], a[2]) end,
  ['workers'] = function(now, a)
    if a[1] ~= nil then return json(Worker.jobs(now, a[1])) end
    return json(Worker.counts(now))
  end,
  ['recur'] = function(now, a) return Recurring.recur(CLASSIC, now, a) end,
  ['unrecur'] = function(now, a) return Recurring.cancel(a[1]) end,
} end

GROUPS['queue'] = function() return {
  ['queue.forget'] = function(now, a) Queue.forget(rest(a, 1)) end,
  ['queue.counts'] = function(now, a)
    if a[1] ~= nil then return json(Queue.counts(RELESS, now, a[1])) end
    return json(Queue.all_counts(RELESS, now))
  end,
  ['queue.jobsByState'] = function(now, a)
    check(a[1], 'Jobs(): Arg "state" missing')
    if a[1] == 'complete' then
      return json_array(Queue.completed(jobs_page(RELESS, a[2], a[3])))
    end
    return json_array(jobs_by_state(RELESS, now, a[1], a[2], a[3], a[4]))
  end,
  ['queue.length'] = function(now, a) return Queue.length(now, a[1]) end,
  ['queue.pause'] = function(now, a) Queue.pause(rest(a, 1)) end,
  ['queue.unpause'] = function(now, a) Queue.unpause(rest(a, 1)) end,
  ['queue.peek'] = function(now, a) return Queue.peek_range(RELESS, now, a[1], a[2], a[3]) end,
  ['queue.pop'] = function(now, a) return Queue.pop(RELESS, now, a[1], a[2], a[3]) end,
  ['queue.put'] = function(now, a) return Job.put(RELESS, now, a) end,
  ['queue.recurAtInterval'] = function(now, a) return Recurring.recur(RELESS, now, a) end,
  ['queue.stats'] = function(now, a) return stats(now, a[1], a[2]) end,
  ['queue.throttle.get'] = function(now, a)
    check(a[1], 'Queue(): no queue name provided')
    return json(Throttle.info(Keys.queue_throttle(a[1])))
  end,
  ['queue.throttle.set'] = function(now, a)
    check(a[1], 'Queue(): no queue name provided')
    throttle_set(Keys.queue_throttle(a[1]), a[2], nil)
  end,
  ['queue.unfail'] = function(now, a) return Queue.unfail(RELESS, now, a[1], a[2], a[3]) end,
} end

GROUPS['worker'] = function() return {
  ['worker.deregister'] = function(now, a) Worker.forget(rest(a, 1)) end,
  ['worker.forget'] = function(now, a) Worker.forget(rest(a, 1)) end,
  -- aqless's own (see Worker.offer)
  ['worker.offer'] = function(now, a) Worker.offer(now, a[1], a[2], a[3], rest(a, 4)) end,
  ['worker.withdraw'] = function(now, a) Worker.withdraw(a[1], rest(a, 2)) end,
  ['worker.jobs'] = function(now, a)
    if a[1] ~= nil then return json(Worker.jobs(now, a[1])) end
    return json(Worker.counts(now))
  end,
} end

GROUPS['config'] = function() return {
  -- shared by both vocabularies: no option lists everything (classic), an option answers
  -- its value (Config.get)
  ['config.get'] = function(now, a)
    if a[1] == nil then return json(Config.all(CLASSIC)) end
    return Config.get(a[1])
  end,
  ['config.set'] = function(now, a) config_set(a[1], a[2]) end,
  ['config.unset'] = function(now, a) config_unset(a[1]) end,
  ['config.getAll'] = function(now, a) return json(Config.all(RELESS)) end,
} end

GROUPS['recur'] = function() return {
  ['recur.get'] = function(now, a) return object_or_nil(Recurring.object(CLASSIC, a[1])) end,
  ['recur.update'] = function(now, a) return Recurring.update(CLASSIC, now, a) end,
  ['recur.tag'] = function(now, a) return Recurring.add_tags(CLASSIC, a[1], rest(a, 2)) end,
  ['recur.untag'] = function(now, a) return Recurring.remove_tags(CLASSIC, a[1], rest(a, 2)) end,
} end

GROUPS['failureGroups'] = function() return {
  ['failureGroups.counts'] = function(now, a)
    failed_page(a[1], a[2])
    return json(Queue.failure_groups())
  end,
} end

GROUPS['jobs'] = function() return {
  ['jobs.failedByGroup'] = function(now, a)
    if a[1] == nil then return json(Queue.failure_groups()) end
    local start, limit = failed_page(a[2], a[3])
    return json(Queue.failed_in_group(a[1], start, limit))
  end,
  ['jobs.tagged'] = function(now, a) return tagged(RELESS, a[1], a[2], a[3]) end,
  ['jobs.completed'] = function(now, a)
    return json_array(Queue.completed(jobs_page(RELESS, a[1], a[2])))
  end,
  ['jobs.tracked'] = function(now, a) return Job.tracked(RELESS) end,
} end

GROUPS['job'] = function() return {
  ['job.addDependency'] = function(now, a)
    return Job.depends(RELESS, now, a[1], 'on', rest(a, 2))
  end,
  ['job.removeDependency'] = function(now, a)
    return Job.depends(RELESS, now, a[1], 'off', rest(a, 2))
  end,
  ['job.addTag'] = function(now, a) return Job.add_tags(RELESS, now, a[1], rest(a, 2)) end,
  ['job.removeTag'] = function(now, a) return Job.remove_tags(RELESS, now, a[1], rest(a, 2)) end,
  ['job.cancel'] = function(now, a) return Job.cancel(RELESS, now, rest(a, 1)) end,
  ['job.complete'] = function(now, a)
    return Job.complete(RELESS, now, a[1], a[2], a[3], a[4], {})
  end,
  ['job.completeAndRequeue'] = function(now, a)
    local o = options(a, 6)
    o.next = a[5]
    return Job.complete(RELESS, now, a[1], a[2], a[3], a[4], o)
  end,
  ['job.fail'] = function(now, a) return Job.fail(RELESS, now, a[1], a[2], a[3], a[4], a[5]) end,
  ['job.get'] = function(now, a)
    check(a[1], 'Job(): no jid provided')
    return Job.json(RELESS, a[1])
  end,
  ['job.getMulti'] = function(now, a) return Job.list_json(RELESS, rest(a, 1)) end,
  ['job.heartbeat'] = function(now, a) return Job.heartbeat(RELESS, now, a[1], a[2], a[3]) end,
  ['job.log'] = function(now, a) Job.log(RELESS, now, a[1], a[2], a[3]) end,
  ['job.requeue'] = function(now, a) return Job.requeue(RELESS, now, a) end,
  ['job.retry'] = function(now, a)
    return Job.retry(RELESS, now, a[1], a[2], a[3], a[4], a[5], a[6])
  end,
  ['job.setPriority'] = function(now, a) return Job.set_priority(RELESS, now, a[1], a[2]) end,
  ['job.timeout'] = function(now, a) Job.timeout(RELESS, now, rest(a, 1)) end,
  ['job.track'] = function(now, a) return Job.track(RELESS, now, 'track', a[1]) end,
  ['job.untrack'] = function(now, a) return Job.track(RELESS, now, 'untrack', a[1]) end,
} end

GROUPS['tags'] = function() return {
  ['tags.top'] = function(now, a) return top_tags(RELESS, a[1], a[2]) end,
} end

GROUPS['queues'] = function() return {
  ['queues.counts'] = function(now, a) return json_array(Queue.all_counts(RELESS, now)) end,
  ['queues.names'] = function(now, a) return json_array(Queue.names()) end,
} end

GROUPS['queueIdentifierPatterns'] = function() return {
  ['queueIdentifierPatterns.getAll'] = function(now, a) return json(Patterns.identifiers()) end,
  ['queueIdentifierPatterns.setAll'] = function(now, a) Patterns.set_identifiers(a) end,
} end

GROUPS['queuePriorityPatterns'] = function() return {
  ['queuePriorityPatterns.getAll'] = function(now, a) return json(Patterns.priorities()) end,
  ['queuePriorityPatterns.setAll'] = function(now, a) Patterns.set_priorities(a) end,
} end

GROUPS['recurringJob'] = function() return {
  ['recurringJob.cancel'] = function(now, a) return Recurring.cancel(a[1]) end,
  ['recurringJob.get'] = function(now, a)
    return object_or_nil(Recurring.object(RELESS, a[1]))
  end,
  ['recurringJob.addTag'] = function(now, a)
    return Recurring.add_tags(RELESS, a[1], rest(a, 2))
  end,
  ['recurringJob.removeTag'] = function(now, a)
    return Recurring.remove_tags(RELESS, a[1], rest(a, 2))
  end,
  ['recurringJob.update'] = function(now, a) return Recurring.update(RELESS, now, a) end,
} end

GROUPS['throttle'] = function() return {
  ['throttle.delete'] = function(now, a)
    tid_given(a[1])
    Throttle.delete(a[1])
  end,
  ['throttle.get'] = function(now, a)
    tid_given(a[1])
    return json(Throttle.info(a[1]))
  end,
  ['throttle.locks'] = function(now, a)
    tid_given(a[1])
    return json_array(Throttle.locks(a[1]))
  end,
  ['throttle.pending'] = function(now, a)
    tid_given(a[1])
    return json_array(Throttle.pending(a[1]))
  end,
  ['throttle.release'] = function(now, a)
    tid_given(a[1])
    for _, jid in ipairs(rest(a, 2)) do Throttle.release(a[1], jid, now) end
  end,
  ['throttle.set'] = function(now, a) throttle_set(a[1], a[2], a[3]) end,
} end

GROUPS['workers'] = function() return {
  ['workers.counts'] = function(now, a) return json_array(Worker.counts(now)) end,
} end

-- Groups built so far: one per call in a script, kept across calls in a function library.
local built = {}

-- The handler of a command name (function(now, a)), or nil.
local function find_command(name)
  local prefix = string.match(name, '^([^.]*)%.') or ''
  if built[prefix] == nil then
    local group = GROUPS[prefix]
    if group == nil then return nil end
    built[prefix] = group()
  end
  return built[prefix][name]
end
