--[=[ job.cancel | cancel
  Args     jid...
  Reads    ql:j:<jid>, ql:j:<jid>-dependents, ql:j:<jid>-dependencies, ql:tracked,
           ql:aqless:flows; of a flow's jobs (flows.lua): the jobs below a parent named, the
           parent of a job named
  Writes   deletes ql:j:<jid>, ql:j:<jid>-history, ql:j:<jid>-dependencies;
           ql:j:<dependency>-dependents, ql:w:<worker>:jobs, <q>-*, throttles, ql:f:<group>,
           ql:failures, ql:s:stats:<bin>:<q>, ql:t:<tag>, ql:tags; for a flow: the same of
           every job below a parent named (and ql:completed), and of a parent that stays
           ql:j:<parent>, ql:j:<parent>-dependencies and its <q>-depends|work
  Returns  the jids cancelled: those given, then those of the jobs below a flow parent given
  Errors   'Cancel(): <jid> is a dependency of <dependent> but is not mentioned to be canceled'
             JobDependedOnError
           'Cancel(): job <jid> of a flow is running; a flow is not removed while a job it would lose runs'
             FlowRunningError
]=]
Commands['job.cancel'] = function(D, now, jids)
  return Job.cancel(D, now, jids)
end
