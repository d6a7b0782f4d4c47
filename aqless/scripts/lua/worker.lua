-- Workers: ql:workers (name -> last activity) and ql:w:<worker>:jobs (jid -> lock expiry).

-- Forgets workers idle for longer than max-worker-age (done before every listing).
local function expire_workers(now)
  local horizon = now - Config.number('max-worker-age')
  local idle = call('ZRANGEBYSCORE', Keys.workers(), 0, horizon)
  for _, worker in ipairs(idle) do call('DEL', Keys.worker_jobs(worker)) end
  if #idle > 0 then call('ZREMRANGEBYSCORE', Keys.workers(), 0, horizon) end
end

-- {"jobs": [...], "stalled": [...]} of one worker, latest expiry first.
function Worker.jobs(now, worker)
  expire_workers(now)
  local key = Keys.worker_jobs(worker)
  return {
    jobs = call('ZREVRANGEBYSCORE', key, now + 8640000, now),
    stalled = call('ZREVRANGEBYSCORE', key, now, 0),
  }
end

-- One {"name", "jobs", "stalled"} per worker, most recently active first.
function Worker.counts(now)
  expire_workers(now)
  local result = {}
  for i, worker in ipairs(call('ZREVRANGE', Keys.workers(), 0, -1)) do
    local key = Keys.worker_jobs(worker)
    result[i] = {
      name = worker,
      jobs = call('ZCOUNT', key, now, now + 8640000),
      stalled = call('ZCOUNT', key, 0, now),
    }
  end
  return result
end

function Worker.forget(names)
  check(#names > 0, 'Worker(): wrong number of arguments: give at least one worker name')
  call_batched('ZREM', Keys.workers(), names)
end
