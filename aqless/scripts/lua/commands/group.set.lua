--[=[ group.set
  Args     queue, group, [name, value]... (group: '' for the jobs put without one; options:
           weight, a positive number, the group's share of turns (1 by default);
           concurrency, a whole number from 0, the most of its jobs aqless's pop lets run
           at once (0: no cap); rate, a whole number from 0, the most of its jobs aqless's
           pop starts in any window of `per` seconds (0: no rate limit); per, a number of
           seconds above 0 (1 by default), only with rate)
  Reads    ql:q:<q>-group-settings, ql:q:<q>-work, ql:q:<q>-locks, ql:j:<jid>,
           ql:q:<q>-group-rates
  Writes   ql:q:<q>-groups, ql:q:<q>-group-settings, ql:q:<q>-groups-ready,
           ql:q:<q>-group-work:, ql:q:<q>-group-running:<g>, ql:q:<q>-group-rates,
           ql:q:<q>-group-starts:<g>
  Returns  nil
  Errors   'Queue(): no queue name provided'   InvalidArgumentError
           'Group(): Arg "group" missing'   InvalidArgumentError
           'Group(): Arg "weight" not a positive number: <weight>'   InvalidArgumentError
           'Group(): Arg "concurrency" not a whole number from 0: <concurrency>'
             InvalidArgumentError
           'Group(): Arg "rate" not a whole number from 0: <rate>'   InvalidArgumentError
           'Group(): Arg "per" not a number of seconds above 0: <per>'   InvalidArgumentError
           'Group(): Arg "per" given without "rate"'   InvalidArgumentError
]=]
Commands['group.set'] = function(D, now, queue, group, a, first)
  Groups.set(queue, group, a, first)
end
