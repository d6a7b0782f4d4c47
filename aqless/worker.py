"""Worker: runs up to `concurrency` jobs at once as coroutines in one process.

Its loop (aqless._worker.loop) pops into its free slots, and listens for puts while its
queues are empty; jobs reach the slots and leave them in aqless._worker.intake, where
``prefetch`` holds them for one.

Alongside, a LockKeeper heartbeats every running job and cancels the code of any job taken
away (see aqless._worker.locks), and the perform step
(aqless._worker.perform) turns the end of the code
into complete, fail or retry.

Stopping: ``stop()`` stops popping, waits up to `grace` seconds for the running jobs, then
cancels the rest and hands them back to their queues at once (a retry), so another worker
takes them without waiting for their locks to expire; a second ``stop()`` hands back at once.
The jobs held for a slot are handed back as soon as ``stop()`` is called (they never ran:
they are put back into their queues, spending no retry). ``finish()`` waits for the running
jobs however long they take, and runs the held ones too. ``pause()`` keeps the held jobs:
they start as slots free, as the running jobs go on.
"""

from __future__ import annotations

import logging
from collections.abc import KeysView, Sequence
from functools import partial
from typing import TYPE_CHECKING, Final, TypedDict, Unpack, cast

import anyio
from anyio.abc import TaskGroup

from aqless import rules
from aqless._concurrency.task_groups import own_errors
from aqless._concurrency.wakeup import Wakeup
from aqless._connection.batching import Batcher
from aqless._connection.server_checks import check_eviction_policy
from aqless._worker import process as _process
from aqless._worker.budget import SlotBudget as SlotBudget  # public: aqless.worker.SlotBudget
from aqless._worker.control import ControlReader
from aqless._worker.counters import (
    WorkerCounters as WorkerCounters,  # public: aqless.WorkerCounters
)
from aqless._worker.holding import AUTO_SLOTS, HOLD, HoldRule
from aqless._worker.info import InfoPublisher
from aqless._worker.intake import State as _State
from aqless._worker.locks import Heartbeats as Heartbeats  # public: aqless.Heartbeats
from aqless._worker.locks import LockKeeper
from aqless._worker.loop import Limit as _Limit
from aqless._worker.loop import ReserveLoop, WorkerAsPushTaker
from aqless._worker.middleware import Middleware as Middleware  # public: aqless.worker.Middleware
from aqless._worker.observers import WorkerObserver
from aqless._worker.outage import ServerOutage
from aqless._worker.outcomes import Backoff, retry_policy
from aqless._worker.perform import Performer, outcome_of
from aqless._worker.pickup import Pickup
from aqless._worker.policies import RequeuePolicy, RetryPolicy
from aqless._worker.policies import attempt as attempt  # public: aqless.worker.attempt
from aqless._worker.popping import Popper
from aqless._worker.reservers import QueueSelection, Reserver
from aqless._worker.runners import Runners
from aqless._worker.running import RunningJob, RunningJobs
from aqless._worker.served import ServedQueues
from aqless._worker.settings import WorkerKeywords
from aqless._worker.settings import WorkerSettings as WorkerSettings  # public: aqless.*
from aqless._worker.shards import ShardFollower
from aqless.client import Client
from aqless.errors import ConfigurationError
from aqless.handlers import Handlers
from aqless.job import Job

if TYPE_CHECKING:
    from aqless.sharding.client import ShardedClient

__all__ = [
    "Heartbeats",
    "ShardedWorker",
    "Worker",
    "WorkerCounters",
    "WorkerOptions",
    "WorkerSettings",
]

logger = logging.getLogger(__name__)


class WorkerParts(TypedDict, total=False):
    """The code a worker runs besides the jobs' (`Worker`'s keywords of these names)."""

    handlers: Handlers | None
    retry: RetryPolicy | Backoff | None
    requeue: Sequence[RequeuePolicy]
    backoff: Backoff | None
    middleware: Sequence[Middleware]
    observers: Sequence[WorkerObserver]


class WorkerOptions(WorkerKeywords, WorkerParts, total=False):
    """Every keyword of `Worker` but its budget: the settings and the parts."""


class Worker(ReserveLoop):
    """Runs jobs from some queues, `concurrency` at a time (default 10), as coroutines in
    one process. Delivery is at least once: a job whose worker dies runs again elsewhere,
    so handlers should be idempotent.

    Args:
        client: an open client; its ``worker_name`` is the worker's name.
        queues: what to serve: queue names (``"emails"``), globs (``"mail-*"``), negations
            (``"!mail-spam"``) and ``"@identifier"`` (a stored queue pattern). Popped in the
            order the ``reserver`` setting says (default ``"ordered"``: the first queue
            with work first).
        settings: the worker's settings (`aqless.WorkerSettings`: concurrency, prefetch,
            interval, grace, job_timeout, max_jobs, burst...); a setting given as a keyword
            (``Worker(client, queues, concurrency=5)``) overrides the one in `settings`,
            checked by the same rule. Default: every setting at its default.
        handlers: the job code (default: an empty registry, which imports nothing).
        retry: how failing jobs are retried, unless their handler says: a
            `aqless.RetryPolicy` or a `aqless.Backoff` (default None: a failing job fails
            at once, unless it raises `aqless.Retry`).
        requeue: `aqless.RequeuePolicy` entries: which exceptions put jobs back into their
            queue after a random delay without spending a retry (default: none).
        backoff: the same as `retry` (the older name); give one of the two.
        middleware: ``around_perform`` hooks for every job, outermost first: each a
            wrapper ``async def hook(job, perform)`` that awaits ``perform()`` to run the
            job and returns its result, or an async context manager factory taking the
            job (``@asynccontextmanager``). What a hook raises is the job's outcome
            (default: none).
        observers: `aqless.WorkerObserver` objects told what became of each job, for
            metrics and error reporting (``worker.observers`` is the list, to add more).
        budget: slots shared with other workers of the process (a ShardedWorker's): the
            worker runs no more jobs than `concurrency` nor than the budget has free, and
            offers the server only slots the budget gives it. Default: slots of its own.
        keywords: settings, each a field of `aqless.WorkerSettings` (its help text there,
            its rule ``worker.<name>`` in `aqless.rules`).

    Raises:
        InvalidValueError: a setting outside its rule (``concurrency=0``), naming it.
        ConfigurationError: `queues` is one string instead of a list; both `retry` and
            `backoff` given; ``prefetch`` with a shared `budget`.

    Examples:
        ```python
        import aqless

        handlers = aqless.Handlers()

        @handlers.register("send_email", timeout=30)
        async def send_email(job: aqless.Job) -> None:
            ...

        async with aqless.Client() as client:
            worker = aqless.Worker(
                client,
                ["emails"],
                handlers=handlers,
                concurrency=20,
                retry=aqless.RetryPolicy(delay=2.0, max_attempts=5),
            )
            await worker.run()  # until worker.stop() (aqless-run stops it on SIGTERM)
        ```
    """

    def __init__(
        self,
        client: Client,
        queues: Sequence[str],
        settings: WorkerSettings | None = None,
        *,
        handlers: Handlers | None = None,
        retry: RetryPolicy | Backoff | None = None,
        requeue: Sequence[RequeuePolicy] = (),
        backoff: Backoff | None = None,
        middleware: Sequence[Middleware] = (),
        observers: Sequence[WorkerObserver] = (),
        budget: SlotBudget | None = None,
        **keywords: Unpack[WorkerKeywords],
    ) -> None:
        if isinstance(queues, str):
            raise ConfigurationError("queues must be a list of names, not one string")
        settings = (WorkerSettings() if settings is None else settings).replace(**keywords)
        if retry is not None and backoff is not None:
            raise ConfigurationError("give either retry or backoff, not both")
        if settings.prefetch and budget is not None:
            raise ConfigurationError("prefetch cannot be used with a shared slot budget")
        concurrency, max_jobs = settings.concurrency, settings.max_jobs
        # left unset, a worker of few slots holds a job while runs are short (the HoldRule)
        adaptive = settings.prefetch is None and budget is None and concurrency <= AUTO_SLOTS
        prefetch = HOLD if adaptive else settings.prefetch or 0
        #: the settings the worker was made with
        self.settings = settings
        self.client = client
        self.name = client.worker_name
        self.selection = QueueSelection(queues, priorities=settings.priorities)
        reserver = settings.reserver
        self.reserver = reserver if isinstance(reserver, Reserver) else Reserver(reserver)
        self.handlers = handlers if handlers is not None else Handlers()
        self.concurrency = concurrency
        #: the most jobs the worker pops beyond its free slots and holds for one (with the
        #: default prefetch, `prefetching` says how many it holds now)
        self.prefetch = prefetch
        self.interval = settings.interval
        self.grace = settings.grace
        self.max_jobs = max_jobs
        self.burst = burst = settings.burst
        self.max_memory = settings.max_memory
        self.resume = settings.resume
        #: the limit that made the worker finish, if one did (aqless-run then asks its
        #: supervisor to replace the process)
        self.limit_reached: _Limit | None = None
        self.workdir = settings.workdir
        self.counters = WorkerCounters()
        #: told what became of each job (see aqless._worker.observers)
        self.observers: list[WorkerObserver] = list(observers)
        self._running = RunningJobs(concurrency, self.prefetch)
        self._budget = budget
        self._member = None if budget is None else budget.join(self._running)
        self.paused = False
        #: an operator asked it to take no more jobs (`aqless.Workers.control`); it is paused
        self.quiet = False
        self._state: _State = "new"
        self._batcher: Batcher | None = None
        self._wakeup = Wakeup()  # a slot freed, a put arrived, stop or resume was asked
        self._hard_stop = False
        self._run_held = False  # finish(): the held jobs run; stop(): they are handed back
        self._served = ServedQueues(client, self.selection, settings.refresh)
        #: whether the server answers, as the worker's calls tell (see aqless._worker.outage)
        self.outage = ServerOutage(self.name)
        #: decides the default prefetch (None: a fixed one, or none)
        self.hold_rule = (
            HoldRule(
                self._running,
                taken=lambda: self.counters.started,
                more=lambda: self._maybe_more,
                hand_back=partial(self._hand_back_one, reason="held too long, never started"),
                wake=self._wakeup.fire,
            )
            if adaptive
            else None
        )
        self._popper = Popper(
            client,
            self._running,
            self._served,
            self.reserver,
            self.counters,
            max_jobs=max_jobs,
            may_pop=lambda: self._state == "running" and not self.paused,
            budget=budget,
            outage=self.outage,
            pairs=adaptive,
        )
        # pushes (see aqless._worker.pickup) suit workers that take work for ever, on slots
        # of their own or offered within a shared budget
        pushed = max_jobs is None and not burst and (budget is None or budget.pushes)
        taker = WorkerAsPushTaker(self) if pushed else None
        member = self._member if pushed else None
        self._pickup = Pickup(client, self._served, self._news, taker, member, self.outage)
        self._jobs: TaskGroup | None = None  # the running jobs' group, while it is open
        # whether a pop could find a job: the last one came back full, or news came since;
        # when not, a finished job wakes the loop only if it may have released others
        self._maybe_more = True
        self._popping = False  # the loop's pop is on its way
        # two pops may be on their way: with prefetch, where calls run in the order sent
        self._pipelined = False
        self._ahead = Wakeup()  # a slot freed while it was: pop ahead (see _pop_ahead)
        self._popping_ahead = False
        self._control = ControlReader(client, self.name, self._obey)
        self._locks = LockKeeper(
            client,
            self.name,
            self._running.by_jid,
            on_lost=self._on_lost,
            outage=self.outage,
            on_control=self._control.read_soon,
        )
        self._info = InfoPublisher(
            client,
            self.name,
            self.selection.specs,
            concurrency,
            self.counters,
            self.outage,
            mode=lambda: self.mode,
        )
        # with prefetch, a held job starts while the job before reports (in another task)
        self._runners = Runners(self._perform, _task_name, keep=concurrency + min(prefetch, 1))
        self._performer = Performer(
            client,
            self.handlers,
            self.counters,
            self.observers,
            settings,
            release=self._release,
            hold_again=self._running.hold_again,
            stopping=lambda: self._state == "stopping",
            retry=retry_policy(retry if backoff is None else backoff),
            requeue=requeue,
            middleware=middleware,
            outage=self.outage,
        )

    def __repr__(self) -> str:
        return f"<Worker {self.name} {len(self._running.by_jid)}/{self.concurrency} {self._state}>"

    @property
    def refresh(self) -> float:
        """Seconds between re-reading which queues the patterns match."""
        return self._served.refresh

    @refresh.setter
    def refresh(self, seconds: float) -> None:
        self._served.refresh = seconds

    @property
    def listening(self) -> bool:
        """Whether the worker is subscribed to put events (and, where the server pushes
        jobs, to its pushed jobs): it is while it has free slots and found its queues empty.
        After ``stop()`` or ``pause()``, the server may push jobs until this turns False."""
        return self._pickup.listening

    @property
    def state(self) -> _State:
        """new, running, stopping or stopped."""
        return self._state

    @property
    def mode(self) -> str:
        """What its record and process title say it does: running, paused, quiet (an
        operator asked it to take no more jobs), stopping, or new or stopped."""
        if self._state == "running" and self.paused:
            return "quiet" if self.quiet else "paused"
        return self._state

    @property
    def running(self) -> KeysView[str]:
        """The jids of the jobs running now, from their pop until their outcome is
        reported, with the jobs held for a slot (a live, read-only view)."""
        return self._running.by_jid.keys()

    @property
    def prefetching(self) -> int:
        """How many jobs the worker pops beyond its free slots and holds for one now: its
        ``prefetch``, or with the default, what its HoldRule decided (0 or 3)."""
        return self._running.prefetch

    @property
    def held(self) -> list[str]:
        """The jids of the jobs popped ahead (``prefetch``) and held for a slot, in the
        order they start."""
        return [running.job.jid for running in self._running.waiting]

    @property
    def heartbeats(self) -> Heartbeats:
        """The lock renewals so far."""
        return Heartbeats(self._locks.renewals, self._locks.refusals)

    # -- control, from signal handlers or other tasks ------------------------------------------

    def stop(self) -> None:
        """Stop popping; running jobs get `grace` seconds (default 30), then are handed back
        to their queues without spending a retry. A second call hands them back at once.
        Jobs held for a slot (``prefetch``) are handed back now. Safe from a signal handler;
        `run()` returns when the jobs are done or handed back.

        Examples:
            ```python
            import signal

            loop.add_signal_handler(signal.SIGTERM, worker.stop)
            counters = await worker.run()
            ```
        """
        if self._state == "stopping":
            self._hard_stop = True
        self._run_held = False
        self._begin_stop()
        self._hand_back_held()

    def finish(self) -> None:
        """Stop popping and return once the running jobs (and those held for a slot) have
        finished, however long (no `grace` limit, nothing handed back).

        Examples:
            ```python
            worker.finish()  # e.g. before a deploy that must not interrupt jobs
            await run_task  # the task running worker.run()
            ```
        """
        self.grace = float("inf")
        if self._state in ("new", "running"):
            self._run_held = True
        self._begin_stop()

    def hand_back_running(self, reason: str = "operator") -> None:
        """Cancel every running job's code and give the jobs back to their queues, spending
        no retry, with the jobs held for a slot (see ``prefetch``). The worker keeps running.

        Args:
            reason: goes into each job's history, its ``handed-back`` entry (default
                ``"operator"``).

        Raises:
            InvalidValueError: `reason` is empty; no job is touched.

        Examples:
            ```python
            worker.hand_back_running("deploying")
            ```
        """
        rules.check("reason", reason, "job.handBack")
        self._hand_back_held()
        for running in list(self._running.by_jid.values()):
            if not running.waiting:
                running.hand_back(reason)

    def pause(self) -> None:
        """Stop popping (running jobs go on, and the jobs held for a slot start as slots
        free) until `resume_popping()`.

        Examples:
            ```python
            worker.pause()
            ...  # e.g. while a dependency is down
            worker.resume_popping()
            ```
        """
        self.paused = True
        self._pickup.want(False)  # and stop taking pushed jobs
        self._info.publish_soon()

    def resume_popping(self) -> None:
        """Pop again after `pause()`.

        Examples:
            ```python
            worker.resume_popping()
            ```
        """
        self.paused = self.quiet = False
        self._wakeup.fire()
        self._info.publish_soon()

    async def perform(self, job: Job) -> str:
        """Run one popped job's code as `run()` would (handler, middleware, timeout) and
        report how it ended (complete on return, fail or retry on raise); outside `run()`,
        for tests. Its lock is not renewed meanwhile.

        Args:
            job: a job popped by this worker's client (``await queue.pop()``).

        Returns:
            What became of the job: ``"completed"``, ``"failed"``, ``"retried"``,
                ``"handed_back"``, ``"advanced"`` (completed into another queue),
                ``"canceled"``, ``"lost"`` (its lock was lost) or ``"unreported"``.

        Examples:
            ```python
            job = await client.queues["emails"].pop()
            assert await worker.perform(job) == "completed"
            ```
        """
        queue = job.queue_name
        running, _ = self._take_slot(job)
        await self._perform(running)
        return outcome_of(running, queue)

    def _begin_stop(self) -> None:
        if self._state in ("new", "running"):
            self._state = "stopping"
        self._pickup.want(False)  # jobs pushed until the server hears it still run
        self._wakeup.fire()
        self._info.publish_soon()

    def _obey(self, command: str) -> None:
        """An operator's request, read from the worker's control key (see
        aqless._worker.control): quiet pauses it (shown as quiet), stop is `stop()`, resume
        is `resume_popping()`."""
        if command == "quiet":
            self.quiet = True
            self.pause()
        elif command == "stop":
            self.quiet = True
            self.stop()
        elif command == "resume" and self._state == "running":
            self.resume_popping()

    # -- the loop ------------------------------------------------------------------------------

    async def run(self) -> WorkerCounters:
        """Work until stopped (`stop()`, `finish()`) or a setting ends it (``max_jobs``,
        ``max_memory``, ``burst``).

        Returns:
            What was done: jobs taken, completed, failed, retried (`aqless.WorkerCounters`).

        Raises:
            ConfigurationError: the worker ran before (a Worker runs once; make a new one),
                or the server's ``maxmemory-policy`` evicts keys (which may delete jobs).
            ConnectionLostError: the server could not be reached to start.

        Examples:
            ```python
            counters = await aqless.Worker(client, ["emails"], burst=True).run()
            print(counters.completed, counters.failed)
            ```
        """
        if self._state not in ("new", "stopping"):
            raise ConfigurationError("a Worker runs once; make a new one")
        await check_eviction_policy(self.client.protocol.wire, strict=self.client.strict)
        stopped_early = self._state == "stopping"
        self._state = "stopping" if stopped_early else "running"
        if self.workdir is not None:
            self.workdir.mkdir(parents=True, exist_ok=True)
        logger.info(
            "worker %s serving %s with %d slots%s (%s reserver)",
            self.name,
            ", ".join(self.selection.specs),
            self.concurrency,
            _prefetch_words(self.prefetch, adaptive=self.hold_rule is not None),
            self.reserver.name,
        )
        with own_errors():  # a refused subscription is its typed error, not a group's
            await self._serve()
        self._state = "stopped"
        _process.set_title(f"aqless-run {self.name}: stopped")
        logger.info("worker %s stopped: %s", self.name, self.counters)
        return self.counters


def _prefetch_words(prefetch: int, *, adaptive: bool) -> str:
    """The worker's prefetch, for its first log line."""
    if adaptive:
        return f", prefetch {prefetch} while runs are short"
    return f", prefetch {prefetch}" if prefetch else ""


def _task_name(running: RunningJob) -> str:
    return f"aqless job {running.job.jid}"


#: the keywords that are a worker's parts, not its settings
_PARTS: Final = WorkerParts.__optional_keys__


class ShardedWorker(ShardFollower[Worker]):
    """Runs jobs from some queues on every shard, `concurrency` at a time in all.

    `ShardedWorker` runs one `Worker` per shard in one task group, each on its shard's client,
    all sharing one budget of `concurrency` slots: a shard with all
    the work may use every slot, and a slot freed on one shard wakes a shard waiting for one.
    Each shard's worker keeps all of its own machinery: its pops, heartbeats and outcomes go
    to its shard, and it is pushed jobs by, or woken by the put events of, that shard. An idle
    one offers its server a share of the budget's free slots (the budget counts them as taken
    until they are given back), so a job put into an idle queue on
    any shard arrives in one hop; a shard short of a slot makes the others give their offered
    slots back. With `max_jobs` (or ``burst``) none takes pushed jobs. A pop takes at most a
    quarter of the slots, so no shard takes them all at once while another has work.

    The shard map may change while it runs (shards added, drained, forgotten): every
    ``client.refresh`` seconds it reads the map again, starts a Worker for each new shard (in
    the same budget) and stops the Worker of a forgotten shard. A draining shard's Worker
    keeps taking its jobs.

    Args:
        client: an open ShardedClient.
        queues: as `Worker`'s.
        settings: as `Worker`'s (`aqless.WorkerSettings`), for every shard's worker, but:
            ``concurrency`` is one budget of slots for every shard's worker (at least one
            per shard), and ``max_jobs`` counts the jobs taken over every shard, then it
            finishes and returns.
        options: `Worker`'s keywords (settings, overriding those in `settings`, and its
            handlers, retry, requeue, backoff, middleware and observers), for every shard's
            worker.

    Raises:
        ConfigurationError: `concurrency` below one slot per shard, or as `Worker`.
        InvalidValueError: a setting outside its rule.

    Examples:
        ```python
        async with aqless.ShardedClient("redis+cluster://node-1:7000", deployment="jobs") as client:
            worker = aqless.ShardedWorker(client, ["emails"], handlers=handlers, concurrency=40)
            await worker.run()
        ```
    """

    def __init__(
        self,
        client: ShardedClient,
        queues: Sequence[str],
        settings: WorkerSettings | None = None,
        **options: Unpack[WorkerOptions],
    ) -> None:
        parts = {name: value for name, value in options.items() if name in _PARTS}
        keywords = {name: value for name, value in options.items() if name not in _PARTS}
        settings = (WorkerSettings() if settings is None else settings).replace(**keywords)
        concurrency, max_jobs = settings.concurrency, settings.max_jobs
        shards = client.clients
        if concurrency < len(shards):
            raise ConfigurationError(
                f"concurrency {concurrency} is less than one slot for each of the "
                f"{len(shards)} shards"
            )
        self.client = client
        self.settings = settings
        self.concurrency = concurrency
        self._queues = list(queues)
        self._parts = cast(WorkerParts, parts)
        self._shard_settings = settings.replace(max_jobs=None)  # the budget counts them
        self.max_jobs = max_jobs
        #: the limit that made the worker finish, if one did
        self.limit_reached: str | None = None
        self.budget = SlotBudget(concurrency, jobs=max_jobs, on_spent=self._spent)
        #: one worker per shard, by shard id
        self.by_shard = {shard.id: self._worker(shard.id) for shard in client.shards.shards}
        self._stopping = False
        self._paused = False
        self._live = 0
        self._retired: set[int] = set()  # forgotten shards whose workers were stopped

    def _worker(self, shard_id: int) -> Worker:
        shard = self.client.shard(shard_id)
        return Worker(shard, self._queues, self._shard_settings, budget=self.budget, **self._parts)

    @property
    def workers(self) -> list[Worker]:
        """The shards' workers, in shard order (a forgotten shard's stays listed)."""
        return list(self.by_shard.values())

    def __repr__(self) -> str:
        return f"<ShardedWorker {len(self.by_shard)} shards {self.concurrency} slots>"

    async def run(self) -> WorkerCounters:
        """Run every shard's worker, following the shard map, until all have stopped;
        returns their counters summed. A shard's worker that fails stops the others and
        raises its own error (e.g. PermissionDeniedError when the shard's ACL refuses
        its channels), not anyio's ExceptionGroup.

        Raises:
            ConfigurationError: as `Worker.run` (a worker runs once, an evicting server).
            PermissionDeniedError: a shard's ACL refuses the worker's calls or channels.
            ConnectionLostError: a shard could not be reached to start.

        Examples:
            ```python
            counters = await worker.run()
            ```
        """
        with own_errors():
            async with anyio.create_task_group() as group:
                for worker in self.by_shard.values():
                    self._start(group, worker)
                group.start_soon(self._follow_map, group)
        return self.counters

    def follow(self, group: TaskGroup) -> None:
        """Match the workers to the shard map the client holds now: start a worker for
        each new shard in `group`, stop the worker of each forgotten one. `run` does it
        every ``client.refresh`` seconds.

        Examples:
            ```python
            await client.reread_map()
            worker.follow(group)  # the task group running the shards' workers
            ```
        """
        self._follow(group)

    @property
    def counters(self) -> WorkerCounters:
        """What the shards' workers did, summed."""
        return self._summed()

    @property
    def running(self) -> list[str]:
        """The jids running now, on every shard."""
        return [jid for worker in self.by_shard.values() for jid in worker.running]

    def stop(self) -> None:
        """`Worker.stop` on every shard.

        Examples:
            ```python
            loop.add_signal_handler(signal.SIGTERM, worker.stop)
            ```
        """
        self._stopping = True
        self._each(Worker.stop)

    def finish(self) -> None:
        """`Worker.finish` on every shard.

        Examples:
            ```python
            worker.finish()
            ```
        """
        self._stopping = True
        self._each(Worker.finish)

    def pause(self) -> None:
        """`Worker.pause` on every shard (and a shard's added meanwhile).

        Examples:
            ```python
            worker.pause()
            ```
        """
        self._paused = True
        self._each(Worker.pause)

    def resume_popping(self) -> None:
        """`Worker.resume_popping` on every shard.

        Examples:
            ```python
            worker.resume_popping()
            ```
        """
        self._paused = False
        self._each(Worker.resume_popping)
