--[=[ rateLimit.delete
  Args     id
  Reads    none
  Writes   rate limits
  Returns  nil
  Errors   'RateLimit(): no id provided'   InvalidArgumentError
]=]
Commands['rateLimit.delete'] = function(D, now, id)
  RateLimit.delete(id)
end
