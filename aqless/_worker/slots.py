"""What a worker knows about each job it runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import anyio

from aqless._connection.wakeup import Wakeup
from aqless._worker.threads import ThreadCall
from aqless.job import Job
from aqless.models import JobState

__all__ = ["Slot", "Wakeup"]


@dataclass(slots=True, eq=False)
class Slot:
    """A running job, from its pop until its outcome is reported.

    Attributes:
        job: the job as popped (job code may change its attributes).
        index: the slot's number (0..concurrency-1), which names its sandbox.
        lock_seconds: how long a lock lasts in the job's queue.
        renew_at: when (by the client's clock) to heartbeat next.
        scope: cancels the job's code (None until it starts).
        lost: why the job is no longer ours (None while it is): its code is cancelled and
            nothing is reported.
        handing_back: the worker is stopping: the code is cancelled and the job retried.
        reporting: the code ended; its outcome is being sent.
        sandbox: the slot's clean directory, when the worker has a workdir.
        frees: finishing the job may make other jobs poppable (it has dependents, or holds
            a throttle with a maximum).
        released: the slot may take its next job: the outcome is on its way to the server
            (the next pop will run after it), or there is nothing to report.
        overrun: the job's code was cut off but its thread runs on: the slot is not
            released until it returns (see aqless._worker.threads).
    """

    job: Job
    index: int
    lock_seconds: float
    renew_at: float
    scope: anyio.CancelScope | None = None
    lost: str | None = None
    handing_back: str | None = None
    reporting: bool = False
    sandbox: Path | None = field(default=None)
    frees: bool = False
    released: bool = False
    overrun: ThreadCall | None = None

    @property
    def settled(self) -> bool:
        """Whether the job's code already completed, failed, retried, moved or cancelled it."""
        return self.job.state != JobState.RUNNING or not self.job.worker_name

    @property
    def held(self) -> bool:
        """Whether the job's lock is the worker's to renew: not taken away, not settled."""
        return self.lost is None and not self.settled

    def cancel(self) -> None:
        if self.scope is not None:
            self.scope.cancel()

    def lose(self, reason: str) -> None:
        """The job is not ours any more: stop its code, report nothing."""
        if self.lost is None:
            self.lost = reason
        self.cancel()

    def hand_back(self, reason: str) -> None:
        """Stop the job's code and give the job back to its queue."""
        if self.handing_back is None and not self.reporting:
            self.handing_back = reason
            self.cancel()
