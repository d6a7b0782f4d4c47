--[=[ group.counts
  Args     queue
  Reads    ql:q:<q>-groups, ql:q:<q>-groups-ready, ql:q:<q>-group-settings,
           ql:q:<q>-group-work:<g>, ql:q:<q>-work, ql:q:<q>-locks, ql:j:<jid>,
           ql:q:<q>-group-rates, ql:q:<q>-group-starts:<g>
  Writes   ql:q:<q>-group-work:<g> (pruned of jids no longer waiting),
           ql:q:<q>-group-starts:<g> (trimmed to the window)
  Returns  JSON list of the queue's groups in name order ([] for a queue without groups):
           {"group": name ('' for jobs put without one), "waiting": n, "running": n,
           "weight": w, "concurrency": cap (0: none), "rate": starts per period (0: no
           rate limit), "per": the period in seconds (0: none), "used": the starts in the
           window ending now}
  Errors   'Queue(): no queue name provided'   InvalidArgumentError
]=]
Commands['group.counts'] = function(D, now, queue)
  return json_array(Groups.counts(queue, now))
end
