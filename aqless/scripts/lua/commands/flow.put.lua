--[=[ flow.put
  Args     worker, tree (JSON: a job {jid, klass, queue, data (JSON text), [name], [policy:
           fail|ignore|continue], [delay], [children: [job...]], and put's options by name,
           lists as JSON lists: [priority], [retries], [tags], [depends], [throttles],
           [rate_limits], [group]...}; aqless's own, see flows.lua)
  Reads    ql:j:<jid> of every job of the tree, and what put reads
  Writes   what put writes, for every job of the tree (children first); ql:j:<jid>'s
           flow_parent, flow_name, flow_policy, flow_children; ql:aqless:flows
  Returns  the root's jid
  Errors   'flow.put(): Arg "tree" not JSON'   InvalidArgumentError
           'flow.put(): a job of the flow is not an object'   FlowError
           'flow.put(): a job of the flow has no jid'   FlowError
           'flow.put(): job <jid> would be its own descendant'   FlowCycleError
           'flow.put(): job <jid> appears twice in the flow'   FlowCycleError
           'flow.put(): the flow has more than <n> jobs'   FlowTooLargeError
           'flow.put(): the flow is deeper than <n> levels'   FlowTooLargeError
           'flow.put(): job <jid> has more than <n> children'   FlowTooLargeError
           'flow.put(): job <jid> has no class'   FlowError
           'flow.put(): job <jid> has no queue'   FlowError
           'flow.put(): job <jid> data is not JSON'   FlowError
           'flow.put(): job <jid> has an unknown failure policy: <policy>'   FlowError
           'flow.put(): job <jid> has a name that is not text'   FlowError
           'flow.put(): job <jid> <option> is not a number'   FlowError
           'flow.put(): job <jid> <option> is not a list of names'   FlowError
           'flow.put(): job <jid> children is not a list'   FlowError
           'flow.put(): two children of job <jid> are named <name>'   FlowError
           'flow.put(): job <jid> group is not a name'   FlowError
           'flow.put(): job <jid> already exists'   FlowJidTakenError
           'Put(): Arg "worker" missing'   InvalidArgumentError
           as queue.put
]=]
Commands['flow.put'] = function(D, now, worker, tree)
  return Flows.put(now, worker, tree)
end
