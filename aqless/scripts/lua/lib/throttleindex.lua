-- The throttles' index (aqless's own): ql:throttles, the set of the ids of the throttles
-- this script gave a record (throttle.set, queue.throttle.set), so that listing them never
-- scans the keyspace. Other clients keep no index: a queue's own throttle is found through
-- ql:queues, and a named one an index has not seen is added by throttle.index (aqless's
-- `throttle reindex` finds them with a bounded SCAN, one step at a time).

function Throttle.index_key() return PREFIX .. 'throttles' end

function Throttle.index_add(tid) call('SADD', Throttle.index_key(), tid) end

function Throttle.index_remove(tid) call('SREM', Throttle.index_key(), tid) end

function Throttle.all()
  local ids, seen = {}, {}
  for _, tid in ipairs(call('SMEMBERS', Throttle.index_key())) do
    seen[tid] = true
    if call('EXISTS', Keys.throttle(tid)) == 1 then
      ids[#ids + 1] = tid
    else
      Throttle.index_remove(tid)
    end
  end
  for _, queue in ipairs(call('ZRANGE', Keys.queues(), 0, -1)) do
    local tid = Keys.queue_throttle(queue)
    if not seen[tid] and call('EXISTS', Keys.throttle(tid)) == 1 then ids[#ids + 1] = tid end
  end
  table.sort(ids)
  local result = {}
  for i, tid in ipairs(ids) do
    local info = Throttle.info(tid)
    info.locks = call('ZCARD', Keys.throttle(tid) .. '-locks')
    info.pending = call('ZCARD', Keys.throttle(tid) .. '-pending')
    result[i] = info
  end
  return result
end

function Throttle.adopt(tids)
  local added = 0
  for _, tid in ipairs(tids) do
    if call('EXISTS', Keys.throttle(tid)) == 1 then
      added = added + call('SADD', Throttle.index_key(), tid)
    end
  end
  return added
end
