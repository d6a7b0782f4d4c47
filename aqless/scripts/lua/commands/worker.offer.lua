--[=[ worker.offer
  Args     worker, slots, seconds, queue... (aqless's own: a put into one of the queues pops a
           job for the worker, see Worker.offer)
  Reads    none
  Writes   ql:offers:<q>
  Returns  the number of subscribers to ql:pushed (workers that hear put events), or nil when
           the user may not ask (PUBSUB NUMSUB)
  Errors   'Offer(): Arg "worker" missing'   InvalidArgumentError
           'Offer(): Arg "slots" not a positive number: <slots>'   InvalidArgumentError
           'Offer(): Arg "seconds" not a positive number: <seconds>'   InvalidArgumentError
           'Offer(): wrong number of arguments: give at least one queue name'   InvalidArgumentError
]=]
Commands['worker.offer'] = function(D, now, worker, slots, seconds, queues)
  return Worker.offer(now, worker, slots, seconds, queues)
end
