"""How jobs reach a Worker's slots, and leave them: a popped, pushed or taken-back job starts
at once in a free slot, or is held for one (``prefetch``), or is handed back (the worker
stops, or it was held too long); a job that ends releases its slot, starts the next held one
and wakes the loop when a pop may find more. A part of `aqless.Worker` (its base class), whose
``__init__`` makes the state declared here."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from anyio.abc import TaskGroup

from aqless._concurrency.wakeup import Wakeup
from aqless._worker.budget import Member, SlotBudget
from aqless._worker.counters import WorkerCounters
from aqless._worker.holding import HoldRule
from aqless._worker.locks import LockKeeper
from aqless._worker.perform import Performer
from aqless._worker.popping import Popper, Unreadable
from aqless._worker.runners import Runners
from aqless._worker.running import RunningJob, RunningJobs
from aqless._worker.served import ServedQueues
from aqless.client import Client
from aqless.job import Job

# the worker's own logger, as before these parts had a module of their own
logger = logging.getLogger("aqless.worker")

#: A worker's state (`Worker.state`).
State = Literal["new", "running", "stopping", "stopped"]


class JobIntake:
    """The slots' side of a Worker: taking jobs into them and releasing them."""

    client: Client
    name: str
    counters: WorkerCounters
    burst: bool
    hold_rule: HoldRule | None
    _state: State
    _running: RunningJobs
    _budget: SlotBudget | None
    _member: Member | None
    _wakeup: Wakeup
    _run_held: bool
    _served: ServedQueues
    _popper: Popper
    _locks: LockKeeper
    _runners: Runners[RunningJob]
    _performer: Performer
    _jobs: TaskGroup | None
    _maybe_more: bool

    if TYPE_CHECKING:

        def _pop_ahead(self) -> None: ...

    def _take_slot(self, job: Job) -> tuple[RunningJob, RunningJob | None]:
        now = self.client.clock()
        lock_seconds = max(job.expires_at - now, 0.3)
        return self._running.take(job, lock_seconds, renew_at=now + lock_seconds / 3)

    def _known(self, job: Job) -> bool:
        """Whether the worker already holds this attempt of the job or a later one (a pop's
        reply read after that of the take-back or pop that made the later attempt): the job
        is then not started again. A job without an attempt never runs: every way a job
        reaches the worker (a pop, a push, a take-back) carries it, and its heartbeats,
        outcome and the writes its code fences are checked against it; one that came without
        (a bug) is logged and left to the lock's expiry, which costs the job a retry, not the
        worker its run."""
        if job.attempt is None:
            logger.error("job %s reached worker %s without an attempt: not run", job.jid, self.name)
            return True
        known = self._running.by_jid.get(job.jid)
        return known is not None and (known.job.attempt or 0) >= job.attempt

    def _take(self, jobs: TaskGroup, job: Job, *, pushed: bool = False) -> None:
        """Start a popped or pushed job if a slot is free, else hold it for one."""
        if self._known(job):
            return
        self._start_held(jobs)  # the jobs held before it go first
        if self._running.free_slots() > 0:
            self._start(jobs, job, pushed=pushed)
            return
        # a pushed job that came while the slots are full (see aqless._worker.pickup) is
        # held too: the worker runs no more than `concurrency` jobs at once
        now = self.client.clock()
        lock_seconds = max(job.expires_at - now, 0.3)
        running, stale = self._running.hold(job, lock_seconds, renew_at=now + lock_seconds / 3)
        self._admit(running, stale)
        if self._state != "running" and not self._run_held:
            self._hand_back_held()

    def _start(self, jobs: TaskGroup, job: Job, *, pushed: bool = False) -> None:
        if self._known(job):
            return
        running, stale = self._take_slot(job)
        if self._member is not None and not pushed:
            self._member.popped(job.jid)
        self._admit(running, stale)
        if self._budget is not None:
            self._budget.took()
        self._runners.start(jobs, running)

    def _admit(self, running: RunningJob, stale: RunningJob | None) -> None:
        """Count a job taken, started or held, and have its lock renewed."""
        job = running.job
        own_throttle = f"{self.client.prefix}q:{job.queue_name}"
        running.frees = bool(job.dependents) or any(
            throttle != own_throttle or job.queue_name in self._served.throttled
            for throttle in job.throttles
        )
        if stale is not None:  # its lock expired (e.g. in an outage) and we popped it again
            self._locks.lose(stale, "popped again by this worker")
        self._locks.watch(running)
        self.counters.started += 1
        if self.hold_rule is not None:
            self.hold_rule.busy()

    def _start_held(self, jobs: TaskGroup) -> None:
        """Start the jobs held for a slot, as many as there are free slots: at once, with
        no round trip."""
        while (running := self._running.start_waiting()) is not None:
            if self._budget is not None:
                self._budget.took()
            self._runners.start(jobs, running)

    def _hand_back_held(self) -> None:
        """Give the jobs held for a slot back to their queues (the worker stops)."""
        group = self._jobs
        if group is None:
            return
        while self._running.waiting:
            self._hand_back_one(self._running.waiting[0])

    def _hand_back_one(self, running: RunningJob, reason: str = "held, never started") -> None:
        """Give one job held for a slot back to its queue (the worker stops, or the job was
        held too long: see aqless._worker.holding), with `reason` in its history."""
        group = self._jobs
        if group is not None and self._running.unhold(running):
            group.start_soon(self._give_back_held, running, reason)

    async def _give_back_held(self, running: RunningJob, reason: str) -> None:
        try:
            await self._performer.give_back_unstarted(running, reason)
        except Exception:  # a bug must cost one job (its lock expires), not the worker
            logger.exception("job %s: handing it back failed", running.job.jid)
        finally:
            self._running.remove(running)
            self._wakeup.fire()

    async def _perform(self, running: RunningJob) -> None:
        try:
            await self._performer.perform(running)
        except Exception:  # a bug must cost one job (its lock expires), not the worker
            logger.exception("job %s: running or reporting it failed", running.job.jid)
        finally:
            self._release(running)
            self._running.remove(running)
            # reported: what it released (dependents, throttles) can be popped now
            if self._state != "running" or self.burst or running.frees:
                self._wakeup.fire()

    def _release(self, running: RunningJob) -> None:
        """The job's slot may take the next job: its outcome is on its way (any pop sent
        from now on runs after it), or there is nothing to report. A job held for a slot
        starts in it at once."""
        if not self._running.release(running):
            return
        if self._jobs is not None and self._running.waiting:
            self._start_held(self._jobs)
        if self._maybe_more or self._state != "running":
            self._wakeup.fire()
            self._pop_ahead()
        if self._budget is not None:
            self._budget.freed()

    def _take_pushed(self, jobs: Sequence[Job], unreadable: Sequence[Unreadable] = ()) -> None:
        """Start jobs the server popped for this worker on a put (see aqless._worker.pickup),
        and fail those whose data cannot be read."""
        group = self._jobs
        if group is None:  # cannot happen: pushes end before the group closes
            for job in jobs:
                logger.error("job %s pushed to a stopped worker; its lock will expire", job.jid)
            return
        for job in jobs:
            self._take(group, job, pushed=True)
        for refused in unreadable:
            group.start_soon(self._popper.fail_unreadable, refused)

    def _pushes_may_be_lost(self) -> None:
        """Look for jobs this worker holds but never heard of, after the next pop."""
        self._popper.unknown_held = True
        self._wakeup.fire()

    def _news(self) -> None:
        """A put event: a pop may find a job now."""
        self._maybe_more = True
        self._wakeup.fire()

    def _on_lost(self, running: RunningJob) -> None:
        self.counters.lost += 1
        if self._running.unhold(running):  # held for a slot: it will never start
            self._running.remove(running)
            self._wakeup.fire()
