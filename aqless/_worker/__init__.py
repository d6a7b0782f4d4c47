"""The worker's machinery, behind ``aqless.worker.Worker``.

Private: nothing here is public API. ``perform`` runs one job and reports its outcome,
``locks`` heartbeats, ``running`` tracks the running jobs and the slots they hold,
``popping`` pops jobs for the free slots, ``pickup`` hears about new work,
``runners``/``threads``/``children`` run job code, ``served`` the queues served,
``defaults`` the worker's defaults, ``process``/``logs``/``stacks`` the process around it.
"""
