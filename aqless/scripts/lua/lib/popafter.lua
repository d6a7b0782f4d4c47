-- One job at a time (aqless's own, `queue.popAfter`): a worker's outcome for the job it ran
-- and its pop of the next, in one call. A script call has a fixed cost of its own, which a
-- worker with one slot pays twice per job when the two go as calls of their own.
--
-- The outcome runs as its own command would, with its own `now` and arguments, then the
-- pop as `rateLimit.pop` (the worker's pop): the keys, replies and events are those of the two calls sent one
-- after the other. A refused outcome (the job is no longer the worker's) does not stop the
-- pop, as it would not have stopped the pop sent behind it: its error text is the reply's.

-- The commands a worker reports an outcome with (the reqless vocabulary's).
local POP_AFTER_OUTCOMES = {
  ['job.complete'] = true, ['job.completeAndRequeue'] = true, ['job.fail'] = true,
  ['job.retry'] = true, ['job.requeue'] = true,
}

-- The pop options of aqless's pops (rateLimit.pop's, and here the pop's after `limit`):
-- each job's data comes apart from the reply's JSON, as stored, not escaped into it; the
-- worker's, `data_apart_no_history` (Queue.NO_HISTORY), also leaves out each job's history;
-- `data_beside` (Queue.BESIDE, the worker's when its jobs' data is big) also leaves out
-- each job's data, which the worker reads itself (see Job.read_for_pop).
local DATA_APART = 'data_apart'
Queue.NO_HISTORY = 'data_apart_no_history'
Queue.BESIDE = 'data_beside'
Queue.POP_OPTIONS = {[DATA_APART] = true, [Queue.NO_HISTORY] = true, [Queue.BESIDE] = true}

-- A command run under pcall: 'ok' and its reply, or 'refused' and the text of its refusal
-- (the script's own, or the server's error for a command it ran, e.g. WRONGTYPE, an ACL's).
local function pop_after_part(ok, reply)
  if ok then return 'ok', reply end
  if type(reply) == 'table' and reply.err then return 'refused', reply.err end
  return 'refused', tostring(reply)
end

-- `a`, from `first`: [data_apart], command, the command's now, its arguments...; `find`:
-- the entry of a command name. Returns {'ok' or 'refused', the pop's reply or the text of its
-- refusal, 'ok' or 'refused', the outcome's reply or the text of its refusal}: each call
-- answers as it would on its own.
function Queue.pop_after(now, queue, worker, limit, a, first, find)
  local count = Queue.pop_count(REQLESS, queue, worker, limit)
  local pop = {queue, worker, count, n = 3}
  local skip = first - 1  -- the pop's arguments
  if Queue.POP_OPTIONS[a[first]] then
    pop[4], pop.n, skip = a[first], 4, first
  end
  local command, at = a[skip + 1], a[skip + 2]
  check(POP_AFTER_OUTCOMES[command], 'PopAfter(): Arg "command" not an outcome: '
    .. tostring(command))
  local outcome_now = number(at)
  if not outcome_now then raise('PopAfter(): Arg "now" not a number: ' .. tostring(at)) end
  local arguments = {n = math.max(0, a.n - skip - 2)}
  for i = skip + 3, a.n do arguments[i - skip - 2] = a[i] end
  local outcome, outcome_reply = pop_after_part(pcall(find(command), outcome_now, arguments))
  -- the per-call caches (configuration, tracking, throttle maximums) hold nothing an
  -- outcome changes: the pop reads what it would read in a call of its own
  pop[3] = Queue.room_left(now, queue, worker, count)
  local popped, pop_reply = pop_after_part(pcall(find('rateLimit.pop'), now, pop))
  return {popped, pop_reply, outcome, outcome_reply}
end

-- The `count` arguments of `a` from `at`, as a list with its length `n`: a call's own
-- arguments, framed in a call of many.
-- (one constructor sizes the table once: filled in a loop, it is rebuilt as it grows;
-- unpack has a limit, so a long list takes the loop)
function Queue.arguments_at(a, at, count)
  if count <= 64 then return {n = count, unpack(a, at, at + count - 1)} end
  local arguments = {n = count}
  for i = 1, count do arguments[i] = a[at + i - 1] end
  return arguments
end

-- One outcome of `jobs.outcomes` framed (command, now, count, arguments) from `a` at `at`,
-- checked, added to `framed` as {entry, now, arguments, jid} (and to `completes`, jid and
-- queue, when a complete); returns the position after it.
function Queue.frame_outcome(a, at, framed, completes, find)
  local command, outcome_now, count = a[at], number(a[at + 1]), number(a[at + 2])
  -- (the hot path tests before it raises: a message is text made)
  if not POP_AFTER_OUTCOMES[command] then
    raise('Outcomes(): Arg "command" not an outcome: ' .. tostring(command))
  end
  if not outcome_now then
    raise('Outcomes(): Arg "now" not a number: ' .. tostring(a[at + 1]))
  end
  if not count or count < 0 or count ~= math.floor(count) or at + 2 + count > a.n then
    raise('Outcomes(): Arg "count" not a count of the arguments left: '
      .. tostring(a[at + 2]))
  end
  local arguments = Queue.arguments_at(a, at + 3, count)
  -- (the job it names: job.requeue's is its third argument)
  local jid = arguments[command == 'job.requeue' and 3 or 1]
  framed[#framed + 1] = {find(command), outcome_now, arguments, jid}
  if command == 'job.complete' and jid and arguments[3] then
    completes[#completes + 1], completes[#completes + 2] = jid, arguments[3]
  end
  return at + 3 + count
end

-- A run of aqless's worker's plain completes (the job's data left as it was, its attempt
-- given) framed in `jobs.outcomes` as `job.complete*`, worker, queue, count, then each
-- one's now, jid and attempt: 3 arguments a job instead of the 11 of its own frame. Each
-- runs as `job.complete now jid worker queue '' keep_data 1 attempt <attempt>` does (the
-- handler's option checks left out: there are none). Framed as Queue.frame_outcome does,
-- each entry {complete, now, jid, jid, attempt} (Queue.outcomes passes the fifth along).
Queue.KEPT_COMPLETES = 'job.complete*'
function Queue.frame_kept_completes(a, at, framed, completes)
  local worker, queue, count = a[at + 1], a[at + 2], number(a[at + 3])
  local last = count and at + 3 + 3 * count
  if not count or count < 0 or count ~= math.floor(count) or last > a.n then
    raise('Outcomes(): Arg "count" not a count of the arguments left: '
      .. tostring(a[at + 3]))
  end
  local function complete(now, jid, attempt)
    return Job.complete(REQLESS, now, jid, worker, queue, '', NOTHING, true, attempt)
  end
  for i = at + 4, last, 3 do
    local outcome_now, jid = number(a[i]), a[i + 1]
    if not outcome_now then raise('Outcomes(): Arg "now" not a number: ' .. tostring(a[i])) end
    -- (the entry's third value is the jid, its fifth the attempt: no table of the two)
    framed[#framed + 1] = {complete, outcome_now, jid, jid, a[i + 2]}
    completes[#completes + 1], completes[#completes + 2] = jid, queue
  end
  return last + 1
end

-- Many outcomes in one call (aqless's own, `jobs.outcomes`): the outcomes a worker holds,
-- each framed as command, now, argument count, arguments, then (when `queue` is not '') the
-- pop. The framing is checked whole before anything runs. Each outcome runs as its own call
-- would and answers on its own: a refused one (a lost lock, a stale attempt) is its own
-- refusal's text and stops neither the outcomes after it nor the pop. Their daily statistics
-- are folded (Stats.fold) and written once per queue before the pop.
-- Returns {'ok', 'refused' or '' (no pop), the pop's reply or refusal, then 'ok' or 'refused'
-- and the reply or refusal's text of each outcome, in order}.
function Queue.outcomes(now, queue, worker, limit, a, first, find)
  local pop = nil
  if queue ~= '' then
    pop = {queue, worker, Queue.pop_count(REQLESS, queue, worker, limit), n = 3}
  end
  local at = first
  if Queue.POP_OPTIONS[a[at]] then
    if pop then pop[4], pop.n = a[at], 4 end
    at = at + 1
  end
  local framed, completes = {}, {}
  while at <= a.n do
    if a[at] == Queue.KEPT_COMPLETES then
      at = Queue.frame_kept_completes(a, at, framed, completes)
    else
      at = Queue.frame_outcome(a, at, framed, completes, find)
    end
  end
  local reply, named = {'', ''}, {}
  Job.learn_unrelated(completes)
  Stats.fold()
  for i = 1, #framed do
    local outcome = framed[i]
    -- a job named again: what the earlier outcome left to the flush is written first
    if named[outcome[4] or ''] then
      Stats.flush()
      Stats.fold()
      named = {}
    end
    named[outcome[4] or ''] = true
    local status, answer = pop_after_part(pcall(outcome[1], outcome[2], outcome[3], outcome[5]))
    if answer == nil then answer = false end  -- (a nil would end the reply there)
    reply[2 * i + 1], reply[2 * i + 2] = status, answer
  end
  Stats.flush()
  Job.unrelated = nil
  if pop then
    pop[3] = Queue.room_left(now, queue, worker, pop[3])
    reply[1], reply[2] = pop_after_part(pcall(find('rateLimit.pop'), now, pop))
  end
  return reply
end

-- The most jobs a worker's pop after its outcomes may take: `count`, or fewer while the
-- worker's offer on the queue stands, so that the jobs locked to it (those a put pushed
-- meanwhile included, which the worker may not have read yet) stay within the slots it
-- offered.
function Queue.room_left(now, queue, worker, count)
  local offer = call('HGET', Keys.offers(queue), worker)
  local slots = offer and tonumber(string.match(offer, '^(%d+) '))
  if not slots then return count end
  local room = slots - call('ZCOUNT', Keys.worker_jobs(worker), now, '+inf')
  if room < count then return math.max(room, 0) end
  return count
end

-- Many puts in one call (aqless's own, `jobs.puts`): each framed as its now, the count of its
-- arguments and its arguments, checked whole before any runs; each then runs as its own
-- `queue.put` call would, in order, and answers on its own (a refused put stops none after
-- it). Returns {'ok' or 'refused', the jid or the refusal's text, ...}, one pair a put.
function Queue.puts(a, first, find)
  local framed, at = {}, first
  while at <= a.n do
    local put_now, count = number(a[at]), number(a[at + 1])
    if not put_now then raise('Puts(): Arg "now" not a number: ' .. tostring(a[at])) end
    if not count or count < 0 or count ~= math.floor(count) or at + 1 + count > a.n then
      raise('Puts(): Arg "count" not a count of the arguments left: ' .. tostring(a[at + 1]))
    end
    framed[#framed + 1], framed[#framed + 2] = put_now, Queue.arguments_at(a, at + 2, count)
    at = at + 2 + count
  end
  local put, reply = find('queue.put'), {}
  for i = 1, #framed, 2 do
    local status, answer = pop_after_part(pcall(put, framed[i], framed[i + 1]))
    reply[i], reply[i + 1] = status, answer
  end
  return reply
end
