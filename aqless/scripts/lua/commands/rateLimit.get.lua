--[=[ rateLimit.get
  Args     id
  Reads    rate limits
  Writes   ql:rl:<id>-starts (trimmed to the window)
  Returns  {"id", "limit", "period", "used": starts in the window, "wait": seconds until the
           next free start, and "mode": "smooth" for a smooth limit} (JSON; limit 0 when the
           id has none)
  Errors   'RateLimit(): no id provided'   InvalidArgumentError
]=]
Commands['rateLimit.get'] = function(D, now, id)
  return Helpers.json(RateLimit.info(id, now))
end
