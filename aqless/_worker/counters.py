"""What a worker counts of its jobs (``Worker.counters``, ``aqless.WorkerCounters``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class WorkerCounters:
    """What a worker has done since it started."""

    started: int = 0
    completed: int = 0
    failed: int = 0
    retried: int = 0
    requeued: int = 0
    lost: int = 0
    handed_back: int = 0
