"""What a worker counts of its jobs (``Worker.counters``, ``aqless.WorkerCounters``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class WorkerCounters:
    """What a worker has done since it started (`Worker.counters`, and what `Worker.run`
    returns).

    Attributes:
        started: jobs whose code started.
        completed: jobs completed.
        failed: jobs failed.
        retried: jobs given back to retry (a retry spent).
        requeued: jobs put back by a `aqless.RequeuePolicy` (no retry spent).
        lost: jobs whose lock was lost while they ran.
        handed_back: jobs handed back at a stop (no retry spent).

    Examples:
        ```python
        counters = await worker.run()
        print(f"{counters.completed} completed, {counters.failed} failed")
        ```
    """

    started: int = 0
    completed: int = 0
    failed: int = 0
    retried: int = 0
    requeued: int = 0
    lost: int = 0
    handed_back: int = 0
