--[=[ config.unset
  Args     option
  Reads    none
  Writes   ql:config
  Returns  nil
  Errors   'config.unset(): Arg "option" missing'   InvalidArgumentError
]=]
Commands['config.unset'] = function(D, now, option)
  Helpers.config_unset(option)
end
