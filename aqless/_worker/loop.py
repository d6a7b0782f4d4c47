"""A Worker's run: its services in one task group, the reserve loop, and how it winds down.

The worker's loop pops as many jobs as it has free slots, from its queues in the order its
reserver gives (aqless._worker.popping), and starts each job's code in a task of its own.
When a pop comes back short it subscribes to ``ql:log`` and pops again as soon as a job is
put into one of its queues (or every `interval` seconds, for jobs that become due or are put
by scripts that publish nothing); when its slots are full it unsubscribes again, so a busy
worker reads no events. Meanwhile it offers to take its queues' next jobs, and a put pops
the job for it and pushes it on its own channel (aqless._worker.pickup): those jobs start
without a pop.

With ``prefetch`` (off by default), the worker pops up to that many jobs beyond its free
slots and holds them, their locks renewed like the running jobs', until a slot frees: the
held job then starts at once, while the outcome of the one before and the pop of the next
are on their way, so the worker and the server work at the same time instead of taking
turns. A slot that frees while the loop's pop is on its way sends the next pop at once,
with its outcome (``_pop_ahead``): two pops on their way, the second counting what the
first asked for (aqless._worker.running). A held job waits behind the running ones, and no
other worker can take it meanwhile.

Jobs held under the worker's name that it never heard of are taken back (``_resume``).
Stopping hands back the held jobs, then waits up to `grace` seconds for the running ones. A
part of `aqless.Worker` (its base class), whose ``__init__`` makes the state declared here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from contextlib import nullcontext, suppress
from typing import TYPE_CHECKING, Literal

import anyio
from anyio.abc import TaskGroup

from aqless._concurrency.wakeup import Wakeup
from aqless._connection.batching import Batcher
from aqless._worker import process as _process
from aqless._worker.control import ControlReader
from aqless._worker.info import InfoPublisher
from aqless._worker.intake import JobIntake
from aqless._worker.pickup import Pickup
from aqless._worker.popping import Unreadable
from aqless.errors import ConnectionLostError, ScriptError
from aqless.job import Job
from aqless.schedules import keep_schedules

# the worker's own logger, as before these parts had a module of their own
logger = logging.getLogger("aqless.worker")

#: The limit that made a worker finish (`Worker.limit_reached`).
Limit = Literal["max_jobs", "max_memory"]


class ReserveLoop(JobIntake):
    """The running side of a Worker: its services, its loop and its end."""

    concurrency: int
    prefetch: int
    interval: float
    grace: float
    max_jobs: int | None
    max_memory: int | None
    resume: bool
    paused: bool
    limit_reached: Limit | None
    _batcher: Batcher | None
    _pickup: Pickup
    _info: InfoPublisher
    _control: ControlReader
    _hard_stop: bool
    _popping: bool
    _pipelined: bool
    _ahead: Wakeup
    _popping_ahead: bool

    if TYPE_CHECKING:

        @property
        def mode(self) -> str: ...
        def finish(self) -> None: ...
        def hand_back_running(self, reason: str = "operator") -> None: ...

    async def _serve(self) -> None:
        # a job ending while the next pop is on its way reports with the pop after it,
        # sent at once when the pops may run ahead (see _pop_ahead)
        policy = self.client.protocol.worker_batching(
            prefetching=self.prefetch > 0, on_landed=self._running.landed
        )
        self._pipelined = policy.in_order
        async with (
            self.client.protocol.batching(policy) as self._batcher,
            anyio.create_task_group() as services,
        ):
            await services.start(self._locks.listen)
            services.start_soon(self._locks.keep)
            services.start_soon(self._pickup.run)
            services.start_soon(self._housekeeping)
            services.start_soon(keep_schedules, self.client)
            services.start_soon(self._info.run)
            if self.hold_rule is not None:
                services.start_soon(self.hold_rule.run)
            services.start_soon(self._control.run)
            try:
                async with anyio.create_task_group() as jobs:
                    self._jobs = jobs
                    if self._pipelined:
                        services.start_soon(self._pop_ahead_when_asked, jobs)
                    if self.resume:
                        await self._resume(jobs)
                    await self._reserve_loop(jobs)
                    await self._wind_down()
                    self._jobs = None
            finally:
                with anyio.CancelScope(shield=True):  # bounded: SIGKILL follows SIGTERM
                    await self._performer.aclose()
            services.cancel_scope.cancel()
        await self._info.withdraw()
        if self._member is not None:  # its push connection is closed: no push can come
            self._member.settle()

    async def _reserve_loop(self, jobs: TaskGroup) -> None:
        while self._state == "running":
            wake = self._wakeup.event
            if self._took_max_jobs():  # a pop ahead may have brought the last ones
                break
            if self.paused or not self._popper.ready():
                if self._pushes_only():  # its slots are offered: pushes come, pops wait
                    await self._wait_for_pushes(wake)
                    continue
                self._pickup.want(False)
                self._maybe_more = True  # puts go unheard meanwhile: look when a slot frees
                await self._wait_for_a_slot(wake)
                continue
            self._popping = True
            try:
                popped, asked = await self._popper.pop(self.interval)
            finally:
                self._popping = False
            self._maybe_more = len(popped) >= asked
            if not self._maybe_more and self.hold_rule is not None:
                self.hold_rule.stop_holding()
            for job in popped:
                self._take(jobs, job)
            if self._popper.failures == 0 and self._popper.unknown_held:
                await self._resume_unknown(jobs)
            if self._took_max_jobs():
                break
            # (a pop that asked for none, its slots taken by a worker sharing its budget,
            # says nothing of the queues)
            if (
                self.burst
                and asked
                and not popped
                and not self._running.by_jid
                and not self._popper.held
                and not self._popping_ahead
            ):
                logger.info("worker %s found no more work; finishing", self.name)
                self.finish()
                break
            if len(popped) < asked:
                self._pickup.want(True)
                with anyio.move_on_after(self._popper.idle_wait(self.interval)):
                    await wake.wait()

    def _took_max_jobs(self) -> bool:
        """Whether the worker took its `max_jobs`: it finishes."""
        if self.max_jobs is None or self.counters.started < self.max_jobs:
            return False
        logger.info("worker %s took its %d jobs; finishing", self.name, self.max_jobs)
        self.limit_reached = "max_jobs"
        self.finish()
        return True

    def _pushes_only(self) -> bool:
        """Whether the budget has no slot for a pop but some offered to this worker's
        server, and no news calls for a pop: the worker waits for pushes, and listens."""
        member = self._member
        return (
            not self.paused
            and not self._maybe_more
            and self._pickup.offers
            and member is not None
            and member.offered() > 0
        )

    async def _wait_for_pushes(self, wake: asyncio.Event) -> None:
        self._pickup.want(True)
        with anyio.move_on_after(self._popper.idle_wait(self.interval)):
            await self._wait_for_a_slot(wake)

    async def _wait_for_a_slot(self, wake: asyncio.Event) -> None:
        """Wait for `wake`; the outcome that frees a slot waits for the pop that follows it,
        to share its round trip."""
        batcher = self._batcher
        gathering = (
            batcher.gathering()
            if batcher is not None and not self.paused and not self._popper.ready()
            else nullcontext()
        )
        with gathering:
            if self._budget is not None:  # another worker may free the slot this one lacks
                short = not self.paused and self._maybe_more and self._running.free() > 0
                self._budget.wait(id(self), self._wakeup.fire, short=short)
            try:
                await wake.wait()
            finally:
                if self._budget is not None:
                    self._budget.stop_waiting(id(self))

    def _pop_ahead(self) -> None:
        """With prefetch, a slot that frees while the loop's pop is on its way sends the
        next pop now, with the outcome that freed it, rather than after the first lands:
        two pops on their way keep the server busy while the worker reads the other's
        reply and runs its job, so neither waits for the other (see aqless._worker.running
        for how the second pop counts the jobs the first will bring)."""
        if (
            self._popping
            and self._popper.in_flight  # sent: what it asked for is counted
            and not self._popping_ahead
            and self._pipelined
            and not self.paused
            and self._state == "running"
            and self._popper.ready()
        ):
            self._popping_ahead = True
            self._ahead.fire()

    async def _pop_ahead_when_asked(self, jobs: TaskGroup) -> None:
        """The pops ahead of the loop's, for ever (cancel to stop)."""
        while True:
            wanted = self._ahead.event
            if not self._popping_ahead:
                await wanted.wait()
                continue
            try:
                if self._popper.ready():  # else the loop's pop landed meanwhile, and took it
                    popped, _ = await self._popper.pop(self.interval, ahead=True)
                    for job in popped:
                        self._take(jobs, job)
            finally:
                self._popping_ahead = False
                self._wakeup.fire()

    async def _wind_down(self) -> None:
        while self._popping_ahead:  # its jobs are taken (and handed back) like the loop's
            await self._wakeup.event.wait()
        if not self._run_held:
            self._hand_back_held()
        self._runners.close()
        self._pickup.want(False)
        with anyio.move_on_after(5.0):
            await self._pickup.quiet()  # the jobs pushed until the server heard it run
            with suppress(ConnectionLostError, ScriptError):
                await self._pickup.withdraw()
        if self._running.by_jid:
            logger.info("worker %s stopping: %d jobs running", self.name, len(self._running.by_jid))
        with anyio.move_on_after(self.grace) as waited:
            while self._running.by_jid and not self._hard_stop:
                await self._wakeup.event.wait()  # fired as slots free, and by stop()
        expired = waited.cancelled_caught and self.grace > 0 and not self._hard_stop
        self.hand_back_running("grace expired" if expired else "worker stopping")

    async def _resume_unknown(self, jobs: TaskGroup) -> None:
        """Take back the jobs a pop whose reply was lost took; if the network fails again
        meanwhile, look again after the next pop that gets its reply."""
        self._popper.unknown_held = False
        try:
            await self._resume(jobs)
        except ConnectionLostError as lost:
            self._popper.unknown_held = True
            logger.warning("looking for jobs held but unknown failed (%s); again later", lost)

    async def _resume(self, jobs: TaskGroup) -> None:
        """Run the jobs the server lists as held by this worker's name that it is not
        running: left by an earlier process of the same name (``resume``), popped by a call
        whose reply a dropped connection lost, or pushed on a subscription that dropped.
        The server hands each back as a new attempt, with its checkpoint (see
        Popper.take_back), so a run of the earlier attempt, wherever it goes on, is fenced
        out."""
        held = await self.client.workers.jobs(self.name)
        if self._running.coming:  # a pop on its way may bring some of them: look after it
            self._popper.unknown_held = True
            return
        by_jid = self._running.by_jid
        unknown = [jid for jid in (*held.jobs, *held.stalled) if jid not in by_jid]
        for job in await self._popper.take_back(unknown):
            logger.info("taking back job %s (%s), attempt %s", job.jid, job.klass_name, job.attempt)
            self._start(jobs, job)

    async def _housekeeping(self) -> None:
        while True:
            mode = self.mode
            running = len(self._running.by_jid)
            _process.set_title(
                f"aqless-run {self.name}: {mode}, {running}/{self.concurrency} running, "
                f"{self.counters.started} taken"
            )
            if self.max_memory is not None and self._state == "running":
                rss = _process.resident_memory()
                if rss is not None and rss > self.max_memory:
                    logger.warning(
                        "worker %s uses %d MB, over its limit of %d MB: finishing",
                        self.name,
                        rss >> 20,
                        self.max_memory >> 20,
                    )
                    self.limit_reached = "max_memory"
                    self.finish()
            await anyio.sleep(1.0)


class WorkerAsPushTaker:
    """The worker as its Pickup sees it (aqless._worker.pickup.PushTaker)."""

    __slots__ = ("_worker",)

    def __init__(self, worker: ReserveLoop) -> None:
        self._worker = worker

    @property
    def name(self) -> str:
        return self._worker.name

    @property
    def capacity(self) -> int:
        return self._worker.concurrency + self._worker._running.prefetch

    @property
    def interval(self) -> float:
        return self._worker.interval

    def take_pushed(self, jobs: Sequence[Job], unreadable: Sequence[Unreadable] = ()) -> None:
        self._worker._take_pushed(jobs, unreadable)

    def pushes_may_be_lost(self) -> None:
        self._worker._pushes_may_be_lost()
