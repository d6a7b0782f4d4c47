--[=[ job.awaitFirst
  Args     jid, worker, attempt, data, key, children, cancel (aqless's own: the workflow's
           race, ctx.first; key names the race within the workflow, children is a JSON list
           of jids, cancel is 'cancel' to cancel the losers that have yet to end, else ''.
           Each child that exists becomes the workflow's flow child under the policy
           continue. The first child to end wins: one that had ended when the race is first
           looked at (the first such in the order given), else the one whose end releases
           the workflow, parked in depends meanwhile with the data. The winner is kept in
           the workflow's hash (wf-won:<key>) and answered by every later call)
  Reads    ql:j:<jid>, ql:j:<child>
  Writes   ql:j:<jid>, ql:j:<jid>-history, ql:j:<jid>-dependencies, ql:j:<child>,
           ql:j:<child>-dependents, ql:q:<q>-locks|depends, ql:w:<worker>:jobs, ql:aqless:flows,
           throttles; with cancel, what job.cancel writes for each loser cancelled
  Returns  the winner's outcome, as a one-element flow.children reply; or parked
  Errors   'Job(): no jid provided'   InvalidArgumentError
           'AwaitFirst(): Arg "key" missing'   InvalidArgumentError
           'AwaitFirst(): Arg "children" not a JSON list of jids: <children>'
             InvalidArgumentError
           'AwaitFirst(): Arg "worker" missing'   InvalidArgumentError
           'AwaitFirst(): Arg "data" missing or not JSON: <data>'   InvalidArgumentError
           'AwaitFirst(): Job <jid> does not exist'   JobNotFoundError
           'AwaitFirst(): Job <jid> is not currently running: <state>'   LockLostError
           'AwaitFirst(): Job <jid> has been given to another worker: <worker>'
             LockLostError
           'AwaitFirst(): Arg "attempt" not a whole number: <attempt>'
             InvalidArgumentError
           'AwaitFirst(): Job <jid> attempt <n> is stale: the job is on attempt <current>'
             StaleAttemptError
]=]
Commands['job.awaitFirst'] = function(D, now, jid, worker, attempt, data, key, children, cancel)
  return Job.await_first(D, now, jid, worker, attempt, data, key, children, cancel)
end
