--[=[ rateLimit.all
  Args     none
  Reads    rate limits
  Writes   ql:rl:<id>-starts (trimmed to the window)
  Returns  JSON list of every limiter's {"id", "limit", "period", "used", "wait", ["mode"]}
           ([] if none)
  Errors   none
]=]
Commands['rateLimit.all'] = function(D, now)
  return json_array(RateLimit.all(now))
end
