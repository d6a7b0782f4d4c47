--[=[ config.set
  Args     option, value
  Reads    none
  Writes   ql:config
  Returns  nil
  Errors   'config.set(): Arg "option" missing'   InvalidArgumentError
           'config.set(): Arg "value" missing'   InvalidArgumentError
           'config.set(): Arg "value" not a number for <option>: <value>'   InvalidArgumentError
           'config.set(): Arg "value" of <option> must be <above|from> <least>: <value>'   InvalidArgumentError
]=]
Commands['config.set'] = function(D, now, option, value)
  Helpers.config_set(option, value)
end
