--[=[ worker.withdraw
  Args     worker, queue...
  Reads    none
  Writes   ql:offers:<q>
  Returns  nil
  Errors   'Withdraw(): Arg "worker" missing'   InvalidArgumentError
]=]
Commands['worker.withdraw'] = function(D, now, worker, queues)
  Worker.withdraw(worker, queues)
end
