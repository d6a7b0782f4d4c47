--[=[ rateLimit.pop
  Args     queue, worker, limit, [data_apart, data_apart_no_history or data_beside]
  Reads    as queue.pop, rate limits, ql:q:<q>-scheduled
  Writes   as queue.pop, ql:rl:<id>-starts
  Returns  {"jobs": queue.pop's reply, "wait": seconds until a rate limit that held the pop back
           has a free start or, when it took fewer jobs than it could, until the queue's next
           scheduled job is due; null when neither, "held": whether a rate limit held the pop
           back, or the next scheduled job names one} (JSON); with data_apart (aqless's own), a
           list: that JSON text with no "data" in the job objects, then each job's stored data
           text as it is, in the order of the jobs; with data_apart_no_history (aqless's
           workers') the same, and the job objects have no "history"; with data_beside
           (aqless's workers', for big data) the same, but false in place of each job's
           data, which the worker reads itself (HMGET ql:j:<jid> data jid)
  Errors   as pop
]=]
Commands['rateLimit.pop'] = function(D, now, queue, worker, limit, data_apart)
  local apart = nil
  if data_apart == DATA_APART then
    apart = {''}
  elseif data_apart == Queue.NO_HISTORY then
    apart = {'', no_history = true}
  elseif data_apart == Queue.BESIDE then
    apart = {'', no_history = true, beside = true}
  end
  local jobs
  if apart and apart.beside then
    jobs = Job.beside_pop(Queue.pop, D, now, queue, worker, limit, apart)
  else
    jobs = Queue.pop(D, now, queue, worker, limit, apart)
  end
  RateLimit.note_scheduled(queue, now)
  local reply = '{"jobs":' .. jobs .. ',"wait":' .. cjson.encode(RateLimit.wait or cjson.null)
    .. ',"held":' .. tostring(RateLimit.held) .. '}'
  if apart == nil then return reply end
  apart[1] = reply
  return apart
end
