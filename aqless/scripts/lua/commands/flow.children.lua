--[=[ flow.children
  Args     jid (aqless's own: a flow parent's children and their outcomes, see flows.lua)
  Reads    ql:j:<jid>, ql:j:<child> of each child
  Writes   none
  Returns  JSON list of {"jid", "name", "policy", "state", "result" (the stored JSON text),
           "dropped", "failure"}, one per child in order ("state" false for a child that
           no longer exists); nil when the job does not exist
  Errors   'Job(): no jid provided'   InvalidArgumentError
]=]
Commands['flow.children'] = function(D, now, jid)
  return Flows.children(jid)
end
