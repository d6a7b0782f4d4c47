--[=[ job.signal
  Args     jid, signal, payload, id (aqless's own: a signal for a workflow, kept until one
           of its waits takes it; a parked workflow waiting for it is made waiting, and
           pushed to an offering worker as a put's job is)
  Reads    ql:j:<jid>, ql:offers:<q>, ql:config
  Writes   ql:j:<jid>, ql:j:<jid>-history, ql:q:<q>-scheduled|work; a push to an offering
           worker writes what pop writes
  Returns  woken (the workflow waited for it), kept, or duplicate (a signal of that id
           was delivered before: nothing written)
  Errors   'Job(): no jid provided'   InvalidArgumentError
           'Signal(): Arg "signal" missing'   InvalidArgumentError
           'Signal(): Arg "payload" missing or not JSON: <payload>'   InvalidArgumentError
           'Signal(): Arg "id" missing'   InvalidArgumentError
           'Signal(): Job <jid> does not exist'   JobNotFoundError
           'Signal(): Job <jid> has ended: <state>'   SignalRefusedError
]=]
Commands['job.signal'] = function(D, now, jid, signal, payload, id)
  return Job.signal(now, jid, signal, payload, id)
end
