--[=[ flow.tree
  Args     jid (aqless's own: the whole flow a job belongs to, see flows.lua)
  Reads    ql:j:<jid> of the job, its ancestors and every job of the flow
  Writes   none
  Returns  JSON of the root {"jid", "state", "klass", "queue", "name", "policy", "failure",
           "children": [node...]} ("state" false for a job that no longer exists); nil
           when the job does not exist
  Errors   'Job(): no jid provided'   InvalidArgumentError
]=]
Commands['flow.tree'] = function(D, now, jid)
  return Flows.tree(jid)
end
