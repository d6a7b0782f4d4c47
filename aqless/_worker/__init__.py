"""The worker's machinery, behind ``aqless.worker.Worker``.

Private: nothing here is public API. ``perform`` runs one job and reports its outcome,
``locks`` heartbeats, ``slots``/``slot_table`` track the running jobs, ``pickup`` hears about
new work, ``runners``/``threads``/``children`` run job code, ``served`` the queues served,
``process``/``logs``/``stacks`` the process around it.
"""
