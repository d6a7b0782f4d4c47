-- What the commands share: JSON replies, pages of a listing, the checks of throttles and
-- options several commands make. (One table: every top-level local of a module counts
-- towards the one chunk's limit of 200, tests/scripts/test_locals.py.)

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

