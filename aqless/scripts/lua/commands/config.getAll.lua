--[=[ config.getAll
  Args     none
  Reads    ql:config
  Writes   none
  Returns  JSON object of every option (reqless defaults overlaid with the stored ones)
  Errors   none
]=]
Commands['config.getAll'] = function(D, now)
  return Helpers.json(Config.all(D))
end
