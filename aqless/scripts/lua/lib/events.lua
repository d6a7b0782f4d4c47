-- Pubsub notifications. Payloads are concatenated in the reference key order instead of
-- encoding a Lua table, whose key order differs between Lua builds: the bytes are the same
-- on every server.

local Events = {}

-- object('jid', jid, 'event', 'put', ...): a JSON object in exactly this key order.
local function object(...)
  local parts = {}
  for i = 1, select('#', ...), 2 do
    local key, value = select(i, ...)
    parts[#parts + 1] = '"' .. key .. '":' .. json_value(value)
  end
  return '{' .. table.concat(parts, ',') .. '}'
end

-- A shard of a sharded deployment (config `aqless-pubsub` = `sharded`, written by aqless's
-- ShardedClient) publishes with SPUBLISH: its channels carry the keys' hash tag, so only the
-- primary of its slot hears it, instead of a Cluster's every node. Read once per call.
local sharded = nil

local function publishes_sharded()
  if sharded == nil then sharded = Config.option('aqless-pubsub') == 'sharded' end
  return sharded
end

function Events.publish(channel, payload)
  if publishes_sharded() then
    call('SPUBLISH', Keys.channel(channel), payload)
  else
    call('PUBLISH', Keys.channel(channel), payload)
  end
end

-- How many connections listen on a channel, subscribed as the namespace publishes.
function Events.listeners(channel)
  if publishes_sharded() then
    return call('PUBSUB', 'SHARDNUMSUB', Keys.channel(channel))[2]
  end
  return call('PUBSUB', 'NUMSUB', Keys.channel(channel))[2]
end

-- Whether anything is tracked, read once per call: most deployments track nothing, and
-- then no job needs its own look-up.
local anything_tracked = nil

function Events.is_tracked(jid)
  if anything_tracked == nil then anything_tracked = call('EXISTS', Keys.tracked()) == 1 end
  return anything_tracked and call('ZSCORE', Keys.tracked(), jid) ~= false
end

function Events.forget()
  anything_tracked = nil
  sharded = nil
end

-- Records what a caller learnt of the tracking set (see Job.complete).
function Events.learn_tracked(anything) anything_tracked = anything end

-- Publishes the bare jid on a tracking channel when the job is tracked.
function Events.if_tracked(channel, jid)
  if Events.is_tracked(jid) then Events.publish(channel, jid) end
end

-- The hot payloads are concatenated directly, in the same bytes as `object` writes.
function Events.put(jid, queue)
  Events.publish('log',
    '{"jid":' .. json_value(jid) .. ',"event":"put","queue":' .. json_name(queue) .. '}')
end

-- LOST(jid, worker): the worker's own channel, then the log.
function Events.lock_lost(jid, worker)
  local payload = object('jid', jid, 'event', 'lock_lost', 'worker', worker)
  Events.publish('w:' .. worker, payload)
  Events.publish('log', payload)
end

function Events.canceled_payload(jid, queue, worker)
  return object('jid', jid, 'queue', queue, 'event', 'canceled', 'worker', worker)
end

function Events.completed(jid, queue)
  Events.publish('log',
    '{"jid":' .. json_value(jid) .. ',"event":"completed","queue":' .. json_name(queue) .. '}')
end

function Events.advanced(jid, queue, to)
  Events.publish('log', object('jid', jid, 'to', to, 'event', 'advanced', 'queue', queue))
end

function Events.failed(jid, group, message, worker)
  Events.publish('log', object(
    'message', message, 'jid', jid, 'group', group, 'event', 'failed', 'worker', worker))
end

function Events.config_set(option, value)
  Events.publish('log', object('option', option, 'event', 'config_set', 'value', value))
end

function Events.config_unset(option)
  Events.publish('log', object('event', 'config_unset', 'option', option))
end
