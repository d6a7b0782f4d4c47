--[=[ config.get
  Args     [option]
  Reads    ql:config
  Writes   none
  Returns  none given: JSON object of every option (classic defaults overlaid with the stored
           ones); else the option's value, its classic default (numbers stay numbers), its
           reqless default, or nil (shared by both vocabularies)
  Errors   none
]=]
Commands['config.get'] = function(D, now, option)
  if option == nil then return Helpers.json(Config.all(D)) end
  return Config.get(option)
end
