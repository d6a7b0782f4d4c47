"""Popping jobs for a worker's free slots, never more than the server has freed.

A pop is an ordered call (see aqless._connection.batching): its count is made when its
round trip is sent, last in it, from the slots whose outcomes have landed plus those whose
outcome calls ride ahead of it (`RunningJobs.free`), so the server never sees the worker
hold more jobs than it has slots. A pop asks for at most a quarter of the slots, so that
while some groups' jobs run the server works on the others' outcomes and next pops
(measured: a drain at 50 or 200 slots goes 25-35% faster than with halves, and eighths gain
nothing). A worker sharing a `SlotBudget` with others also asks it for no more than its
free slots, reserving them while its pop is on its way.

A one-slot worker that holds jobs by default (`pairs`, aqless._worker.holding) pops two jobs
a call while it holds: it waits until two have freed (the held jobs run meanwhile), so that
each call carries two outcomes and a pop of two, and the server pays a call's fixed part
once for two jobs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio

from aqless._concurrency.backoff import POP, apart
from aqless._worker.beside import BesideData
from aqless._worker.budget import SlotBudget
from aqless._worker.outage import ServerOutage
from aqless._worker.outcomes import failure_group
from aqless._worker.reservers import Reserver
from aqless._worker.running import RunningJobs
from aqless._worker.served import ServedQueues
from aqless.client import Client
from aqless.errors import ConnectionLostError, PayloadError, ScriptError
from aqless.job import Job

if TYPE_CHECKING:
    from aqless._worker.counters import WorkerCounters

logger = logging.getLogger(__name__)

#: The jobs a one-slot worker's pop asks for while it holds jobs by default (`Popper.pairs`).
PAIR = 2

#: a popped or pushed job's fields that make no Job, and why
Unreadable = tuple[dict[str, Any], PayloadError]


def readable_jobs(
    client: Client, popped: Sequence[dict[str, Any]]
) -> tuple[list[Job], list[Unreadable]]:
    """The jobs of popped fields, and the fields whose data Python cannot read."""
    jobs: list[Job] = []
    unreadable: list[Unreadable] = []
    for fields in popped:
        try:
            jobs.append(Job(client, fields))
        except PayloadError as error:
            unreadable.append((fields, error))
    return jobs, unreadable


class Popper:
    """Pops a worker's jobs from its queues, in its reserver's order.

    Args:
        client: the worker's client (its ``worker_name`` is the worker's).
        running: the worker's running jobs and the slots they hold.
        served: the queues the worker serves.
        reserver: the order queues are popped in.
        counters: the worker's counters (``started``, for `max_jobs`).
        max_jobs: the most jobs the worker takes, or None.
        may_pop: whether the worker still wants jobs (it may stop or pause while a pop
            waits for its round trip).
        budget: slots shared with other workers, or None.
        outage: told when a pop finds no server, and when one finds it again.
        pairs: while the worker holds jobs (its ``prefetch``, set by its HoldRule), pop
            `PAIR` jobs a call, once that many have freed (see the module's documentation).
    """

    def __init__(
        self,
        client: Client,
        running: RunningJobs,
        served: ServedQueues,
        reserver: Reserver,
        counters: WorkerCounters,
        *,
        max_jobs: int | None,
        may_pop: Callable[[], bool],
        budget: SlotBudget | None = None,
        outage: ServerOutage | None = None,
        pairs: bool = False,
    ) -> None:
        self._client = client
        self._outage = outage if outage is not None else ServerOutage(client.worker_name)
        self._running = running
        self._served = served
        self._reserver = reserver
        self._counters = counters
        self._max_jobs = max_jobs
        self._may_pop = may_pop
        self._budget = budget
        self._limit = (running.concurrency + 3) // 4
        self._beside = BesideData(client)  # the queues whose data it reads itself
        self.pairs = pairs
        self.failures = 0  # pops failed in a row
        #: pops sent, whose replies have not come yet
        self.in_flight = 0
        #: seconds until a rate limit that held the last pop back has a free start, or None
        self.rate_wait: float | None = None
        #: whether a rate limit held the last pop back (its jobs are not done, only paced)
        self.held = False
        #: the worker may hold jobs it never heard of: a pop failed (it may have run, its
        #: jobs unknown), or jobs pushed to it may have been lost
        self.unknown_held = False

    def limit(self) -> int:
        """The most jobs one pop asks for: a quarter of the slots, or `PAIR` (`pairs`)."""
        return PAIR if self.pairs and self._running.prefetch else self._limit

    def ready(self) -> bool:
        """Whether a pop may go now: a job fits, and with `pairs`, as many as a pop asks
        for, or the worker has no job in hand (none running, held or coming)."""
        free = self.free()
        if free <= 0:
            return False
        if not self.pairs or free >= self.limit():
            return True
        running = self._running
        return not (running.free_slots() < running.concurrency or running.waiting or running.coming)

    def free(self, released: Sequence[str] | None = None) -> int:
        """How many jobs the worker may take now; with `released`, when a pop is sent
        (see RunningJobs.free); never past `max_jobs`, nor the shared budget's free slots."""
        free = self._own_free(released)
        if self._budget is not None:
            free = min(free, self._budget.free())
        return free

    def _own_free(self, released: Sequence[str] | None) -> int:
        free = self._running.free(released)
        if self._max_jobs is not None:
            free = min(free, self._max_jobs - self._counters.started - self._running.coming)
        return free

    async def pop(self, refused_pause: float, *, ahead: bool = False) -> tuple[list[Job], int]:
        """Jobs for the free slots, and how many were asked for. A pop that fails is
        followed by a backoff; one the server refuses by `refused_pause` seconds. A pop
        `ahead` of the worker's own, sent while that one is on its way, neither waits after
        a failure (the other pop does) nor tells of rate limits (the other pop's news)."""
        popped: list[Job] = []
        asked = self.free()
        if not ahead:
            self.rate_wait = None
            self.held = False
        name = self._client.worker_name
        # outcomes that went ahead of an earlier queue's pop have landed, though their tasks
        # may not have freed their slots yet (an outcome and a pop share one reply)
        landed: list[str] = []
        budget = self._budget
        reserved = 0  # in the budget, for the jobs this pop asked for and brought
        running = self._running
        coming = 0  # counted in running.coming: asked for, or popped and not yet taken
        sent: list[str] = []  # the queues whose pops were sent and have no reply yet

        def arguments(queue: str, released: Sequence[str]) -> tuple[str, str, int, str]:
            nonlocal asked, reserved, coming
            landed.extend(released)
            wanted = max(0, min(self._own_free(landed), self.limit() - len(popped)))
            if not self._may_pop():  # since the pop was asked for
                wanted = 0
            if budget is not None:
                wanted = min(wanted, max(0, budget.free()))
                budget.reserve(wanted)
                reserved += wanted
            asked = len(popped) + wanted
            running.coming += wanted
            coming += wanted
            self.in_flight += 1
            sent.append(queue)
            return queue, name, wanted, self._beside.option(queue)

        try:
            for queue in self._reserver.order(await self._served.current()):
                reply = await self._client.protocol.json_apart_ordered(
                    "rateLimit.pop", partial(arguments, queue)
                )
                running.landed(landed)  # its reply came: what went ahead of it ran
                self.in_flight -= len(sent)
                sent.clear()
                jobs = reply["jobs"]
                running.coming -= coming - len(popped) - len(jobs)  # what it did not bring
                coming = len(popped) + len(jobs)
                popped += await self._jobs(queue, jobs)
                if budget is not None:  # keep the slots of the jobs it brought
                    budget.give_back(asked - len(popped))
                    reserved -= asked - len(popped)
                if not ahead:
                    self._note_rate_wait(reply["wait"])
                    self.held = self.held or reply["held"]
                if len(popped) >= asked:
                    break
        except ConnectionLostError as error:
            self.in_flight -= len(sent)  # no reply will come
            sent.clear()
            self.failures += 1
            self.unknown_held = True
            delay = POP.after(self.failures)
            logger.debug("pop failed (%s); again in %.2f s", error, delay)
            self._outage.failed(error)
            if not ahead:
                await anyio.sleep(delay)
        except ScriptError as error:
            self.in_flight -= len(sent)
            sent.clear()
            logger.error("pop refused: %s", error)
            if not ahead:
                await anyio.sleep(refused_pause)
        else:
            self.failures = 0
            self._outage.answered()
        finally:  # the caller takes the jobs popped before it awaits anything
            self.in_flight -= len(sent)
            running.coming -= coming
            if budget is not None:
                budget.give_back(reserved)
        return popped, asked

    async def take_back(self, jids: Sequence[str]) -> list[Job]:
        """Take back, each as a new attempt, those of `jids` that the server holds for this
        worker (``worker.takeBack``): jobs it never heard of, popped by a call whose reply
        was lost, pushed on a subscription that dropped, or left by an earlier process of
        its name. They come as a pop brings them, with their attempt and checkpoint."""
        if not jids:
            return []
        reply = await self._client.protocol.json("worker.takeBack", self._client.worker_name, *jids)
        return await self._jobs("", reply or [])

    async def _jobs(self, queue: str, popped: list[dict[str, Any]]) -> list[Job]:
        """The popped jobs, their data read when the pop left it out (see BesideData);
        those that cannot run fail (see `fail_unreadable`)."""
        jobs, unreadable = readable_jobs(self._client, await self._beside.read(queue, popped))
        for job in unreadable:
            await self.fail_unreadable(job)
        return jobs

    async def fail_unreadable(self, job: Unreadable) -> None:
        """A job whose stored data is not JSON to Python (another writer's) cannot run: it
        fails at once into `<queue>-PayloadError`, rather than when its lock lapses."""
        fields, error = job
        logger.error("job %s: %s", fields.get("jid"), error)
        group = failure_group(str(fields.get("queue")), error)
        await self._fail(str(fields.get("jid")), group, str(error))

    async def _fail(self, jid: str, group: str, message: str) -> None:
        try:
            await self._client.protocol.call(
                "job.fail", jid, self._client.worker_name, group, message
            )
        except (ConnectionLostError, ScriptError) as error:  # its lock lapses, as a lost job's
            logger.warning("job %s: could not fail it (%s)", jid, error)

    def _note_rate_wait(self, wait: float | None) -> None:
        if wait is not None and (self.rate_wait is None or wait < self.rate_wait):
            self.rate_wait = wait

    def idle_wait(self, interval: float) -> float:
        """How long the worker waits for news after a short pop: `interval`, or less when
        a rate limit frees a start sooner (its wait is exact, so idle workers do not poll)."""
        wait = apart(interval)  # a fleet started together polls apart, not in bursts
        return wait if self.rate_wait is None else min(wait, self.rate_wait)
