-- Job results (aqless's own): a job's return value, kept in its hash as `result` (JSON
-- text) by the complete that finishes it, or why it was not kept as `result_dropped`. Both
-- live and expire with the job (jobs-history), and a put of the same jid clears them.
-- Other qless clients ignore the two fields and never send the option.

local Results = {}

-- The fields a finishing complete adds to its HSET: {name, value}, or {} with no result.
-- o: complete's options `result` (JSON text) and `result_dropped` (why there is none).
-- Checked before the complete writes anything; a result over result-max-bytes is dropped.
function Results.fields(o, next_queue)
  local result, dropped = o.result, o.result_dropped
  if result == nil and dropped == nil then return NOTHING end
  check(next_queue == nil, 'Complete(): "result" cannot be used with a "next".')
  if result == nil then return {'result_dropped', dropped} end
  local limit = Config.number('result-max-bytes')
  if #result > limit then
    return {'result_dropped', string.format(
      'the result is %d bytes, over result-max-bytes (%d)', #result, limit)}
  end
  check(pcall(cjson.decode, result), 'Complete(): Arg "result" not JSON')
  return {'result', result}
end

-- A put of an existing jid starts the job afresh: no result of its last run.
function Results.clear(jid)
  call('HDEL', Keys.job(jid), 'result', 'result_dropped')
end

-- What `job.result` answers: {"state", "result" (the stored JSON text), "dropped",
-- "failure"}, the last three when present; nil when the job does not exist.
function Results.json(jid)
  check(jid, 'Job(): no jid provided')
  local v = call('HMGET', Keys.job(jid), 'state', 'result', 'result_dropped', 'failure')
  if not v[1] then return nil end
  return cjson.encode({state = v[1], result = v[2] or nil, dropped = v[3] or nil,
    failure = decode_stored(v[4])})
end
