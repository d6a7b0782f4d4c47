--[=[ worker.forget | worker.deregister
  Args     worker...
  Reads    none
  Writes   ql:workers
  Returns  nil
  Errors   'Worker(): wrong number of arguments: give at least one worker name'
             InvalidArgumentError
]=]
Commands['worker.forget'] = function(D, now, workers)
  Worker.forget(workers)
end
