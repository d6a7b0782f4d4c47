--[=[ worker.takeBack
  Args     worker, [jid...] (aqless's own: a worker takes back jobs it holds but never heard
           of, each as a new attempt, see Worker.take_back)
  Reads    ql:config, ql:w:<worker>:jobs, job objects
  Writes   ql:workers, ql:w:<worker>:jobs, ql:q:<q>-locks, ql:j:<jid>, ql:j:<jid>-history
           (a `taken-back` entry {worker})
  Returns  JSON list of the objects of the jobs taken back, each with its attempt and
           checkpoint as aqless's own pops present them ([] when none)
  Errors   'TakeBack(): Arg "worker" missing'   InvalidArgumentError
]=]
Commands['worker.takeBack'] = function(D, now, worker, jids)
  return Worker.take_back(now, worker, jids)
end
