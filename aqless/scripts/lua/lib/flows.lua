-- Flows (aqless's own): a tree of jobs put in one call, each parent waiting in `depends` on
-- its children, as any qless job waits on its dependencies (ql:j:<parent>-dependencies,
-- ql:j:<child>-dependents). Three hash fields tie the tree together, which other qless
-- clients ignore:
--   flow_parent    on a child: its parent's jid
--   flow_name      on a child: the name its parent reads its result by ('' for none)
--   flow_policy    on a child: what its failure for good does to the parent (fail, ignore,
--                  continue; absent is fail)
--   flow_children  on a parent: the JSON list of its children's jids, in the order given
-- A child's result is its own `result` field (results.lua); the parent reads them all with
-- flow.children. The fail paths (lifecycle.lua) call Flows.failed once a job has failed for
-- good: under `fail` the parent fails too (and so on up the tree), under `ignore` and
-- `continue` it stops waiting for that child.

local Flows = {
  MAX_DEPTH = 32,       -- levels below the root
  MAX_CHILDREN = 1000,  -- children of one job
  MAX_JOBS = 10000,     -- jobs in one flow
  POLICIES = {fail = true, ignore = true, continue = true},
  GROUP = 'flow-child-failed',
  -- the fields of a flow's job that are not put's options
  OWN = {jid = true, klass = true, queue = true, data = true, delay = true, policy = true,
    name = true, children = true, depends = true},
}

function Flows.refuse(text) raise('flow.put(): ' .. text) end

function Flows.is_text(value) return type(value) == 'string' and value ~= '' end

function Flows.is_number(value)
  return type(value) == 'number' and value == value and value ~= math.huge
    and value ~= -math.huge
end

function Flows.is_text_list(value)
  if value == nil then return true end
  if type(value) ~= 'table' then return false end
  for i = 1, #value do
    if type(value[i]) ~= 'string' then return false end
  end
  return true
end

-- Checks one node and those below it; `seen` holds every jid met so far, `above` those of
-- its ancestors. Nothing is written until the whole tree passed.
function Flows.check_node(worker, node, depth, seen, above, counted)
  if type(node) ~= 'table' then Flows.refuse('a job of the flow is not an object') end
  local jid = node.jid
  if not Flows.is_text(jid) then Flows.refuse('a job of the flow has no jid') end
  if above[jid] then Flows.refuse('job ' .. jid .. ' would be its own descendant') end
  if seen[jid] then Flows.refuse('job ' .. jid .. ' appears twice in the flow') end
  seen[jid] = true
  counted[1] = counted[1] + 1
  if counted[1] > Flows.MAX_JOBS then
    Flows.refuse('the flow has more than ' .. Flows.MAX_JOBS .. ' jobs')
  end
  if depth > Flows.MAX_DEPTH then
    Flows.refuse('the flow is deeper than ' .. Flows.MAX_DEPTH .. ' levels')
  end
  if not Flows.is_text(node.klass) then Flows.refuse('job ' .. jid .. ' has no class') end
  if not Flows.is_text(node.queue) then Flows.refuse('job ' .. jid .. ' has no queue') end
  if type(node.data) ~= 'string' or not pcall(cjson.decode, node.data) then
    Flows.refuse('job ' .. jid .. ' data is not JSON')
  end
  if node.policy ~= nil and not Flows.POLICIES[node.policy] then
    Flows.refuse('job ' .. jid .. ' has an unknown failure policy: ' .. tostring(node.policy))
  end
  if node.name ~= nil and type(node.name) ~= 'string' then
    Flows.refuse('job ' .. jid .. ' has a name that is not text')
  end
  for _, option in ipairs({'priority', 'retries', 'delay'}) do
    if node[option] ~= nil and not Flows.is_number(node[option]) then
      Flows.refuse('job ' .. jid .. ' ' .. option .. ' is not a number')
    end
  end
  for _, option in ipairs({'tags', 'throttles', 'rate_limits', 'depends'}) do
    if not Flows.is_text_list(node[option]) then
      Flows.refuse('job ' .. jid .. ' ' .. option .. ' is not a list of names')
    end
  end
  if node.group ~= nil and not Flows.is_text(node.group) then
    Flows.refuse('job ' .. jid .. ' group is not a name')
  end
  local children = node.children
  if children ~= nil and type(children) ~= 'table' then
    Flows.refuse('job ' .. jid .. ' children is not a list')
  end
  Job.check_put(REQLESS, Flows.put_arguments(worker, node))  -- every option, as put checks
  if call('EXISTS', Keys.job(jid)) == 1 then Flows.refuse('job ' .. jid .. ' already exists') end
  if children == nil then return end
  if #children > Flows.MAX_CHILDREN then
    Flows.refuse('job ' .. jid .. ' has more than ' .. Flows.MAX_CHILDREN .. ' children')
  end
  local names = {}
  above[jid] = true
  for _, child in ipairs(children) do
    if type(child) == 'table' and Flows.is_text(child.name) then
      if names[child.name] then
        Flows.refuse('two children of job ' .. jid .. ' are named ' .. child.name)
      end
      names[child.name] = true
    end
    Flows.check_node(worker, child, depth + 1, seen, above, counted)
  end
  above[jid] = nil
end

-- put's arguments for a job of the flow: every other field of it is an option, passed to
-- put as put takes it (a list as JSON), so put checks and applies each option as it would
-- any put's; its dependencies are its children and the jobs its `depends` names.
function Flows.put_arguments(worker, node)
  local a = {worker, node.queue, node.jid, node.klass, node.data, node.delay or 0}
  local names = {}
  for name in pairs(node) do
    if not Flows.OWN[name] then names[#names + 1] = name end
  end
  table.sort(names)
  for _, name in ipairs(names) do
    local value = node[name]
    if type(value) == 'table' then value = json_array(value) end
    a[#a + 1] = name
    a[#a + 1] = value
  end
  local depends = {}
  for _, jid in ipairs(node.depends or NOTHING) do depends[#depends + 1] = jid end
  for _, child in ipairs(node.children or NOTHING) do
    if type(child) == 'table' then depends[#depends + 1] = child.jid end
  end
  if #depends > 0 then
    a[#a + 1] = 'depends'
    a[#a + 1] = cjson.encode(depends)
  end
  a.n = #a
  return a
end

-- Puts a node after its children (so that its dependencies exist), as queue.put would.
function Flows.put_node(now, worker, node)
  local children = node.children or NOTHING
  for _, child in ipairs(children) do Flows.put_node(now, worker, child) end
  local a = Flows.put_arguments(worker, node)
  Job.put(REQLESS, now, a)
  if #children > 0 then
    local jids = {}
    for i, child in ipairs(children) do jids[i] = child.jid end
    call('HSET', Keys.job(node.jid), 'flow_children', cjson.encode(jids))
  end
  for _, child in ipairs(children) do
    call('HSET', Keys.job(child.jid), 'flow_parent', node.jid, 'flow_name', child.name or '',
      'flow_policy', child.policy or 'fail')
  end
end

function Flows.put(now, worker, tree_text)
  check(worker, 'Put(): Arg "worker" missing')
  local ok, tree = pcall(cjson.decode, tree_text or '')
  check(ok, 'flow.put(): Arg "tree" not JSON')
  Flows.check_node(worker, tree, 0, {}, {}, {0})
  call('SET', Keys.flows(), 1)
  Flows.put_node(now, worker, tree)
  return tree.jid
end

-- The parent stops waiting for `child` (nil: it did not wait for it) and, with nothing else
-- to wait for, or waiting for the first of its children (Flows.first_ended), is released as
-- a completed dependency would release it (Job.leave_depends).
function Flows.release_parent(now, parent, child)
  if call('SCARD', Keys.dependencies(parent)) > 0 then
    if child ~= nil then Flows.first_ended(now, parent, child) end
    return
  end
  local f = Job.read(parent, {'queue', 'priority', 'scheduled', 'state'})
  if f.state ~= 'depends' or f.queue == nil then return end
  Job.leave_depends(now, parent, f)
end

-- The parent fails for good because of `child`: it leaves its other children (whose
-- completion must not release it) and its queue, joins the failure group GROUP, and its own
-- parent hears of it in turn.
function Flows.fail_parent(now, parent, child, name, failure_text)
  local p = Job.read(parent, {'queue', 'state', 'held_in', 'dedup'})
  if p.state ~= 'depends' then return end
  for _, other in ipairs(call('SMEMBERS', Keys.dependencies(parent))) do
    call('SREM', Keys.dependents(other), parent)
  end
  call('DEL', Keys.dependencies(parent))
  Job.leave_queue(Job.home(p, parent), parent)
  Job.settle_home(parent, p)
  local failure = decode_stored(failure_text) or {}
  local label = child
  if name ~= nil and name ~= '' then label = '"' .. name .. '" (' .. child .. ')' end
  local message = 'child ' .. label .. ' failed: ' .. tostring(failure.group or '?') .. ': '
    .. tostring(failure.message or '')
  History.append(parent, now, 'failed', {group = Flows.GROUP})
  call('HDEL', Keys.job(parent), 'scheduled')
  call('HSET', Keys.job(parent), 'state', 'failed', 'worker', '', 'expires', '',
    'failure', cjson.encode({group = Flows.GROUP, message = message,
      when = math.floor(now), worker = ''}))
  call('SADD', Keys.failures(), Flows.GROUP)
  call('LPUSH', Keys.failed(Flows.GROUP), parent)
  Stats.count(p.queue or '', now, {failures = 1, failed = 1})
  Events.if_tracked('failed', parent)
  Events.failed(parent, Flows.GROUP, message, '')
  Dedup.release(parent, p.dedup)
  Flows.failed(now, parent)
end

-- The hook of the fail paths: `jid` has just failed for good. Acts at most once per child:
-- the parent waits on the child (its dependencies set holds it) until this takes it out.
-- (Given the dialect `D`, it is also the recurring templates' hook, schedules.lua: the job
-- read here says which template spawned it.)
function Flows.failed(now, jid, D)
  local v = call('HMGET', Keys.job(jid), 'flow_parent', 'flow_policy', 'flow_name', 'failure',
    'spawned_from_jid')
  if v[5] and D then Recurring.ended(D, now, v[5], jid, false) end
  local parent = v[1]
  if not parent then return end
  if call('SREM', Keys.dependencies(parent), jid) == 0 then return end
  call('SREM', Keys.dependents(jid), parent)
  if (v[2] or 'fail') == 'fail' then
    Flows.fail_parent(now, parent, jid, v[3] or nil, v[4] or nil)
  else
    Flows.release_parent(now, parent, jid)
  end
end

-- Removal (cancel, job.lua), as BullMQ removes a flow's jobs: a parent goes with every job
-- below it (completed ones included); a job whose parent stays leaves the parent, which
-- stops waiting for it (and, waiting for nothing else, is released); nothing is removed
-- while a job it would remove runs.

-- The jobs a cancel of `jids` removes: those given, in order, then every job below a flow
-- parent among them; and, for each job of a flow among them, its parent (false: none).
function Flows.removal(jids)
  local all, seen, parents = {}, {}, {}
  for i, jid in ipairs(jids) do
    all[i] = jid
    seen[jid] = true
  end
  if call('EXISTS', Keys.flows()) == 0 then return all, seen, parents end  -- no flow, ever
  local i = 1
  while i <= #all do
    local jid = all[i]
    local v = call('HMGET', Keys.job(jid), 'flow_parent', 'flow_children')
    if v[1] or v[2] then parents[jid] = v[1] or false end
    for _, child in ipairs(decode_stored(v[2]) or NOTHING) do
      if not seen[child] then
        seen[child] = true
        all[#all + 1] = child
      end
    end
    i = i + 1
  end
  return all, seen, parents
end

-- Why the removal of `all` is refused (nil: it is not): a job of a flow among them runs.
function Flows.removal_refusal(all, parents)
  for _, jid in ipairs(all) do
    if parents[jid] ~= nil and call('HGET', Keys.job(jid), 'state') == 'running' then
      return 'Cancel(): job ' .. jid .. ' of a flow is running; a flow is not removed while'
        .. ' a job it would lose runs'
    end
  end
  return nil
end

-- A removed job leaves its parent, which stays: the parent no longer lists it nor waits
-- for it, and is released when it waits for nothing else.
function Flows.leave_parent(now, jid, parent)
  local waited = call('SREM', Keys.dependencies(parent), jid) == 1
  call('SREM', Keys.dependents(jid), parent)
  local key = Keys.job(parent)
  local children = decode_stored(call('HGET', key, 'flow_children'))
  if children ~= nil then
    local kept = without(children, {[jid] = true})
    if #kept > 0 then
      call('HSET', key, 'flow_children', cjson.encode(kept))
    else
      call('HDEL', key, 'flow_children')
    end
  end
  Flows.release_parent(now, parent, waited and jid or nil)
end

-- A workflow waiting for the first of its children to end (ctx.first; its field `wf-first`
-- holds the race's key) is released by the first, `child`, which it keeps as the race's
-- winner (`wf-won:<key>`), and stops waiting for the others. Whether it was.
function Flows.first_ended(now, parent, child)
  local key = Keys.job(parent)
  local race = call('HGET', key, 'wf-first')
  if not race then return false end
  call('HSET', key, 'wf-won:' .. race, child)
  call('HDEL', key, 'wf-first')
  for _, other in ipairs(call('SMEMBERS', Keys.dependencies(parent))) do
    call('SREM', Keys.dependents(other), parent)
  end
  call('DEL', Keys.dependencies(parent))
  local f = Job.read(parent, {'queue', 'priority', 'scheduled', 'state'})
  if f.state == 'depends' and f.queue ~= nil then Job.leave_depends(now, parent, f) end
  return true
end

-- A flow child's outcome, as flow.children lists it.
function Flows.outcome(child)
  local c = call('HMGET', Keys.job(child), 'state', 'result', 'result_dropped', 'failure',
    'flow_name', 'flow_policy')
  return {jid = child, state = c[1], result = c[2] or nil, dropped = c[3] or nil,
    failure = decode_stored(c[4]), name = c[5] or '', policy = c[6] or 'fail'}
end

function Flows.children(jid)
  check(jid, 'Job(): no jid provided')
  local v = call('HMGET', Keys.job(jid), 'state', 'flow_children')
  if not v[1] then return nil end
  local children = decode_stored(v[2]) or NOTHING
  local found = {}
  for i, child in ipairs(children) do found[i] = Flows.outcome(child) end
  return json_array(found)
end

-- A node of flow.tree's reply, and those below it.
function Flows.tree_node(jid, depth)
  local v = call('HMGET', Keys.job(jid), 'state', 'klass', 'queue', 'flow_name',
    'flow_policy', 'flow_children', 'failure')
  local node = {jid = jid, state = v[1], klass = v[2] or nil, queue = v[3] or nil,
    name = v[4] or nil, policy = v[5] or nil, failure = decode_stored(v[7])}
  if depth <= Flows.MAX_DEPTH then
    local children = {}
    for i, child in ipairs(decode_stored(v[6]) or NOTHING) do
      children[i] = Flows.tree_node(child, depth + 1)
    end
    if #children > 0 then node.children = children end
  end
  return node
end

function Flows.tree(jid)
  check(jid, 'Job(): no jid provided')
  if call('EXISTS', Keys.job(jid)) == 0 then return nil end
  local root = jid
  for _ = 0, Flows.MAX_DEPTH do
    local parent = call('HGET', Keys.job(root), 'flow_parent')
    if not parent or call('EXISTS', Keys.job(parent)) == 0 then break end
    root = parent
  end
  return cjson.encode(Flows.tree_node(root, 0))
end
