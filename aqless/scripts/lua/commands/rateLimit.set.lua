--[=[ rateLimit.set
  Args     id, limit, period, [mode] (burst, the default, or smooth: see ratelimit.lua)
  Reads    none
  Writes   ql:rl:<id>, ql:rate_limits
  Returns  nil
  Errors   'RateLimit(): no id provided'   InvalidArgumentError
           'RateLimit(): Arg "limit" not a number of at least 1: <limit>'   InvalidArgumentError
           'RateLimit(): Arg "period" not a number of seconds above 0: <period>'
             InvalidArgumentError
           'RateLimit(): Arg "mode" not burst or smooth: <mode>'   InvalidArgumentError
]=]
Commands['rateLimit.set'] = function(D, now, id, limit, period, mode)
  RateLimit.set(id, limit, period, mode)
end
