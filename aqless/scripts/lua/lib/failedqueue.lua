-- One queue's failed jobs, paged on the server (aqless's own). Failed jobs are kept by
-- failure group (ql:f:<group>), not by queue, so a page walks the groups in name order, each
-- newest first, reading each job's `queue`; one call reads at most `budget` jobs and says
-- where the next one resumes.

function Queue.failed_of(queue, skip, count, group, start, budget)
  check(queue, 'Queue(): no queue name provided')
  skip = whole(optional_number(skip, 0, 'Failed(): Arg "skip" is not a number: '))
  count = whole(optional_number(count, 25, 'Failed(): Arg "count" is not a number: '))
  start = whole(optional_number(start, 0, 'Failed(): Arg "start" is not a number: '))
  budget = whole(optional_number(budget, 1000, 'Failed(): Arg "budget" is not a number: '))
  budget = math.max(1, budget)
  local groups = call('SMEMBERS', Keys.failures())
  table.sort(groups)
  local i = 1
  while i <= #groups and groups[i] < (group or '') do i = i + 1 end
  if groups[i] ~= group then start = 0 end
  local jids, skipped, read = {}, 0, 0
  local at_most = 500  -- jids read from a list at once
  while i <= #groups do
    local list = Keys.failed(groups[i])
    while true do
      if read >= budget or #jids >= count then
        return {jids = jids, skipped = skipped, group = groups[i], start = start}
      end
      local n = math.min(budget - read, at_most)
      local listed = call('LRANGE', list, start, start + n - 1)
      for _, jid in ipairs(listed) do
        read, start = read + 1, start + 1
        if call('HGET', Keys.job(jid), 'queue') == queue then
          if skipped < skip then
            skipped = skipped + 1
          else
            jids[#jids + 1] = jid
            if #jids >= count then
              return {jids = jids, skipped = skipped, group = groups[i], start = start}
            end
          end
        end
      end
      if #listed < n then break end
    end
    i, start = i + 1, 0
  end
  return {jids = jids, skipped = skipped, group = cjson.null, start = 0}
end
