"""The jobs a worker runs, and the slots (units of concurrency) they hold.

The rule that keeps a worker within its slots lives here: a job *holds* a slot from its
start until its outcome is on its way to the server (``release``), and stays listed until
the outcome is reported (``remove``). A pop never asks for more jobs than the slots the
server has freed when it runs the pop: the jobs no longer listed, plus those whose
outcomes go ahead of the pop in its round trip, known by the jid each outcome call
``releases`` (see aqless._connection.batching and the outcome verbs of aqless.job).

A worker with `prefetch` holds up to that many jobs more, popped but waiting for a slot
(``hold``): they are listed (so their locks are renewed) and counted against the pops like
running jobs, but hold no slot until one frees (``start_waiting``). Such a worker may have
two pops on their way at once: the jobs a pop asked for count as taken (``coming``) from
when it is sent until its jobs are listed, so the second pop asks only for what is left.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from aqless._worker.threads import ThreadCall
from aqless.job import Job
from aqless.models import JobState

__all__ = ["RunningJob", "RunningJobs"]


@dataclass(slots=True, eq=False)
class RunningJob:
    """A running job, from its pop until its outcome is reported.

    Attributes:
        job: the job as popped (job code may change its attributes).
        slot: the number of the slot it holds (0..concurrency-1), which names its sandbox.
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
        released: its slot may take the next job: the outcome is on its way to the server
            (the next pop will run after it), or there is nothing to report.
        overrun: the job's code was cut off but its thread runs on: the slot is not
            released until it returns (see aqless._worker.threads).
        returned: what the job's code returned: its result (see aqless.results).
        raised: the type of the exception its code raised, for the log (None: none).
        failure: the failure group the worker failed the job into, and why (the
            exception's type and text), for the log (None: the worker failed it not).
        waiting: popped ahead (prefetched), held until a slot frees: its code has not
            started and it holds no slot.
    """

    job: Job
    slot: int
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
    returned: Any = None
    raised: str | None = None
    failure: tuple[str, str] | None = None
    waiting: bool = False

    @property
    def settled(self) -> bool:
        """Whether the job's code already completed, failed, retried, moved, cancelled or
        timed out the job (or such a verb of it is on its way)."""
        return self.job.released or self.job.state != JobState.RUNNING

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


class RunningJobs:
    """The running jobs of a worker, by jid (`by_jid`, shared with the LockKeeper), the
    `concurrency` slots they hold, and the up to `prefetch` jobs held for a slot
    (`waiting`, also listed in `by_jid`)."""

    def __init__(self, concurrency: int, prefetch: int = 0) -> None:
        self.concurrency = concurrency
        self.prefetch = prefetch
        self.by_jid: dict[str, RunningJob] = {}
        #: the jobs held for a slot, in the order they came
        self.waiting: deque[RunningJob] = deque()
        self._free_slots = list(range(concurrency - 1, -1, -1))
        self._extra_slots = 0
        self._holding = 0
        self._landed: set[str] = set()  # listed jobs whose outcome reached the server
        #: jobs asked for by pops on their way, or popped and not yet listed
        self.coming = 0

    def free(self, released: Sequence[str] | None = None) -> int:
        """How many more jobs fit now (in slots, or held for one); with `released`, the
        jids that the calls a pop goes behind release, how many the server will have let
        go of when it runs the pop: the jobs whose outcomes have landed, or go ahead of it."""
        capacity = self.concurrency + self.prefetch - self.coming
        if released is None:
            return capacity - self._holding - len(self.waiting)
        ahead = len(self._landed)
        for jid in set(released):
            running = self.by_jid.get(jid)
            if running is not None and running.released and jid not in self._landed:
                ahead += 1
        return capacity - len(self.by_jid) + ahead

    def landed(self, released: Sequence[str]) -> None:
        """The outcomes that released these jids reached the server (they went ahead of a
        pop whose reply came): their jobs count as gone until their tasks unlist them,
        which may take the event loop a turn or two after the pop's own caller goes on."""
        for jid in released:
            running = self.by_jid.get(jid)
            if running is not None and running.released:
                self._landed.add(jid)

    def free_slots(self) -> int:
        """How many slots could start a job now."""
        return self.concurrency - self._holding

    def take(
        self, job: Job, lock_seconds: float, renew_at: float
    ) -> tuple[RunningJob, RunningJob | None]:
        """List `job` with a slot of its own; returns it and the one it replaces (the same
        job popped again after its lock expired), if any."""
        running = RunningJob(job, self._slot(), lock_seconds, renew_at=renew_at)
        stale = self._list(running)
        self._holding += 1
        return running, stale

    def hold(
        self, job: Job, lock_seconds: float, renew_at: float
    ) -> tuple[RunningJob, RunningJob | None]:
        """List `job` as held for a slot (see `start_waiting`); returns it and the one it
        replaces, if any."""
        running = RunningJob(job, self.concurrency, lock_seconds, renew_at=renew_at, waiting=True)
        stale = self._list(running)
        self.waiting.append(running)
        return running, stale

    def start_waiting(self) -> RunningJob | None:
        """The next held job, given a slot, if there are both; None otherwise."""
        if not self.waiting or self.free_slots() <= 0:
            return None
        running = self.waiting.popleft()
        running.waiting = False
        running.slot = self._slot()
        self._holding += 1
        return running

    def unhold(self, running: RunningJob) -> bool:
        """Take a held job out of the line for a slot (it is lost, or handed back); it
        stays listed until removed. False if it was not waiting."""
        if running not in self.waiting:
            return False
        self.waiting.remove(running)
        return True

    def _slot(self) -> int:
        # taken-back jobs may exceed the slots for a while; their sandboxes get extra numbers
        if self._free_slots:
            return self._free_slots.pop()
        self._extra_slots += 1
        return self.concurrency + self._extra_slots

    def _list(self, running: RunningJob) -> RunningJob | None:
        stale = self.by_jid.get(running.job.jid)
        if stale is not None:
            self.unhold(stale)
            self._landed.discard(running.job.jid)
        self.by_jid[running.job.jid] = running
        return stale

    def release(self, running: RunningJob) -> bool:
        """Let the job's slot take the next job; False if it was released already, holds
        no slot (it was held for one), or its code runs on in a thread (it is released
        once that returns)."""
        if running.released or running.overrun is not None or running.waiting:
            return False
        running.released = True
        self._holding -= 1
        if running.slot < self.concurrency:
            self._free_slots.append(running.slot)
            running.slot = self.concurrency  # given back once
        return True

    def hold_again(self, running: RunningJob) -> None:
        """The job's outcome did not reach the server: it holds a slot until sent again."""
        if running.released and not running.waiting:
            self._landed.discard(running.job.jid)
            running.released = False
            self._holding += 1

    def remove(self, running: RunningJob) -> None:
        """The job's outcome is reported: unlist it (unless a second pop replaced it)."""
        if self.by_jid.get(running.job.jid) is running:
            del self.by_jid[running.job.jid]
            self._landed.discard(running.job.jid)
