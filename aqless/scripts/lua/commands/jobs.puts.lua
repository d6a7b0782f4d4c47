--[=[ jobs.puts
  Args     (now, count, count arguments)... (aqless's own: puts each as queue.put would, in
           order, with its own now and arguments)
  Reads    as queue.put
  Writes   as queue.put
  Returns  {ok or refused, the put's reply or the text of its refusal} for each put
  Errors   'Puts(): Arg "now" not a number: <now>'   InvalidArgumentError
           'Puts(): Arg "count" not a count of the arguments left: <count>'
             InvalidArgumentError
]=]
Commands['jobs.puts'] = function(D, now, a, first)
  return Queue.puts(a, first, find_command)
end
