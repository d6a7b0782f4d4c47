--[=[ job.awaitChildren
  Args     jid, worker, attempt, data, children (aqless's own: the workflow's gather; children
           is a JSON list of jids. Each child that exists becomes the workflow's flow child
           under the policy continue; with none pending, returns their outcomes, else stores
           the data and parks the workflow in depends until they are done)
  Reads    ql:j:<jid>, ql:j:<child>
  Writes   ql:j:<jid>, ql:j:<jid>-history, ql:j:<jid>-dependencies, ql:j:<child>,
           ql:j:<child>-dependents, ql:q:<q>-locks|depends, ql:w:<worker>:jobs, ql:aqless:flows,
           throttles
  Returns  the children's outcomes, as flow.children's reply; or parked
  Errors   'Job(): no jid provided'   InvalidArgumentError
           'AwaitChildren(): Arg "children" not a JSON list of jids: <children>'
             InvalidArgumentError
           'AwaitChildren(): Arg "worker" missing'   InvalidArgumentError
           'AwaitChildren(): Arg "data" missing or not JSON: <data>'   InvalidArgumentError
           'AwaitChildren(): Job <jid> does not exist'   JobNotFoundError
           'AwaitChildren(): Job <jid> is not currently running: <state>'   LockLostError
           'AwaitChildren(): Job <jid> has been given to another worker: <worker>'
             LockLostError
           'AwaitChildren(): Arg "attempt" not a whole number: <attempt>'
             InvalidArgumentError
           'AwaitChildren(): Job <jid> attempt <n> is stale: the job is on attempt <current>'
             StaleAttemptError
]=]
Commands['job.awaitChildren'] = function(D, now, jid, worker, attempt, data, children)
  return Job.await_children(now, jid, worker, attempt, data, children)
end
