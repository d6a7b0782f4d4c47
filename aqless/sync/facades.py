"""The blocking façades, written once for plain and sharded clients.

A façade is a blocking view of one async object of the client on its loop (a queue, the
jobs, a job...). Its verbs are the contract's (aqless.contracts), derived, not forwarded by
hand: ``put = blocking(contracts.Queue.put)`` takes the contract verb's parameters and returns
what it awaits, with jobs made ``SyncJob`` handles. At each call the façade reaches its
object again from the loop's client, so a forked child's new loop and connections serve it.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from types import TracebackType
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Concatenate,
    Generic,
    ParamSpec,
    Self,
    TypeVar,
    cast,
    overload,
)

from aqless import contracts
from aqless.batches import Batches
from aqless.client import Config, Jobs, Queues, Tags, Throttle, Workers
from aqless.errors import PartialPopError
from aqless.events import Event
from aqless.flows.client import Flows
from aqless.job import Job, RecurringJob
from aqless.limits import RateLimit, RateLimits, checked_limit_name
from aqless.models import Failure, HistoryEntry, JobState
from aqless.patterns import QueuePatterns
from aqless.queue import Queue, checked_name
from aqless.sharding.queue import ShardedQueue

if TYPE_CHECKING:
    from aqless.sync.runtime import BlockingClient

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")

#: How a façade reaches its async object from the loop's client.
Reach = Callable[[Any], Any]


def blocking_value(client: BlockingClient[Any], value: Any) -> Any:
    """`value` as a blocking caller gets it: jobs as SyncJob, templates as SyncRecurringJob,
    inside lists and tuples too (a named tuple keeps its class); anything else as it is."""
    if isinstance(value, Job):
        return SyncJob(client, value)
    if isinstance(value, RecurringJob):
        return SyncRecurringJob(client, value)
    if isinstance(value, list):
        return [blocking_value(client, item) for item in value]
    if isinstance(value, tuple):
        items = (blocking_value(client, item) for item in value)
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    return value


class Facade:
    """A blocking view of one async object, reached from the loop's client at each call."""

    #: The async class whose verbs' docstrings the blocking verbs take.
    documented_by: ClassVar[type | None] = None

    def __init__(self, client: BlockingClient[Any], reach: Reach) -> None:
        self._client = client
        self._reach = reach

    async def _target(self, client: Any) -> Any:
        return self._reach(client)

    def _run(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Await the async object's verb `name` on the loop; its value, made blocking."""

        async def verb(client: Any) -> Any:
            return await getattr(await self._target(client), name)(*args, **kwargs)

        try:
            return blocking_value(self._client, self._client.call(verb))
        except PartialPopError as partial:  # its jobs are held: the caller must run them
            partial.jobs = blocking_value(self._client, list(partial.jobs))
            raise


class Verb(Generic[P, R]):
    """A contract's coroutine verb on a façade, blocking: the same parameters, the value it
    awaits (jobs as SyncJob) returned."""

    def __init__(self, verb: Callable[..., Awaitable[Any]]) -> None:
        self.name = verb.__name__
        self.__doc__ = verb.__doc__
        parameters = list(inspect.signature(verb).parameters.values())[1:]  # self aside
        self.signature = inspect.Signature(parameters)

    def __set_name__(self, owner: type, name: str) -> None:
        if name != self.name:
            raise TypeError(f"{owner.__name__}.{name} is the blocking {self.name}: name it so")
        documented = getattr(owner, "documented_by", None)  # the plain class's verb says more
        if documented is not None and getattr(documented, name, None) is not None:
            self.__doc__ = getattr(documented, name).__doc__ or self.__doc__
        self.method = self._method(owner, name)

    def _method(self, owner: type, name: str) -> Callable[..., R]:
        """The verb as a plain method of `owner`: what help() and the reference show."""

        def method(facade: Facade, /, *args: Any, **kwargs: Any) -> R:
            return cast(R, facade._run(name, args, kwargs))

        self_parameter = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)
        method.__name__ = name
        method.__qualname__ = f"{owner.__qualname__}.{name}"
        method.__module__ = owner.__module__
        method.__doc__ = self.__doc__
        method.__signature__ = self.signature.replace(  # type: ignore[attr-defined]
            parameters=[self_parameter, *self.signature.parameters.values()]
        )
        return method

    @overload
    def __get__(self, facade: None, owner: type) -> Callable[..., R]: ...
    @overload
    def __get__(self, facade: Facade, owner: type) -> Callable[P, R]: ...
    def __get__(self, facade: Facade | None, owner: type) -> Callable[..., R] | Callable[P, R]:
        if facade is None:
            return self.method
        name = self.name

        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            return cast(R, facade._run(name, args, kwargs))

        call.__name__ = name
        call.__doc__ = self.__doc__
        call.__signature__ = self.signature  # type: ignore[attr-defined]
        return call


def blocking(verb: Callable[Concatenate[Any, P], Awaitable[R]]) -> Verb[P, R]:
    """The blocking `verb`, for a verb that hands back no job."""
    return Verb(verb)


def blocking_job(
    verb: Callable[Concatenate[Any, P], Awaitable[contracts.Job | None]],
) -> Verb[P, SyncJob | None]:
    """The blocking `verb`, for a verb that hands back a job or None."""
    return Verb(verb)


def blocking_refreshed(
    verb: Callable[Concatenate[Any, P], Awaitable[contracts.Job]],
) -> Verb[P, SyncJob]:
    """The blocking `verb`, for a verb that hands back a job."""
    return Verb(verb)


def blocking_jobs(
    verb: Callable[Concatenate[Any, P], Awaitable[Sequence[contracts.Job]]],
) -> Verb[P, list[SyncJob]]:
    """The blocking `verb`, for a verb that hands back jobs."""
    return Verb(verb)


def blocking_found(
    verb: Callable[Concatenate[Any, P], Awaitable[contracts.Job | contracts.RecurringJob | None]],
) -> Verb[P, SyncJob | SyncRecurringJob | None]:
    """The blocking `verb`, for a verb that hands back a job, a template or None."""
    return Verb(verb)


# -- queues ---------------------------------------------------------------------------------


class QueuesFacade(Facade):
    """Every queue's names and counts (summed over the shards of a sharded deployment)."""

    documented_by: ClassVar[type | None] = Queues

    def __init__(self, client: BlockingClient[Any]) -> None:
        super().__init__(client, lambda loop_client: loop_client.queues)

    names = blocking(contracts.Queues.names)
    counts = blocking(contracts.Queues.counts)
    scaling = blocking(contracts.Queues.scaling)


class SyncQueues(QueuesFacade):
    """``client.queues[name]`` (no I/O), and every queue's names and counts."""

    def __getitem__(self, name: str) -> SyncQueue:
        return SyncQueue(self._client, name)


class SyncShardedQueues(QueuesFacade):
    """``client.queues[name]`` of a sharded deployment (no I/O), and its queues' names and
    counts."""

    def __getitem__(self, name: str) -> SyncShardedQueue:
        return SyncShardedQueue(self._client, name)


class QueueFacade(Facade):
    """A named queue's verbs but its puts, the same on a plain and a sharded client."""

    documented_by: ClassVar[type | None] = Queue

    def __init__(self, client: BlockingClient[Any], name: str) -> None:
        self.name = checked_name(name)
        super().__init__(client, lambda loop_client: loop_client.queues[self.name])

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"

    @property
    def rate_limit(self) -> SyncRateLimit:
        """This queue's own rate limit (no I/O): ``queue.rate_limit.get()``."""
        name = self.name
        return SyncRateLimit(self._client, lambda client: client.rate_limits.of_queue(name))

    recur = blocking(contracts.Queue.recur)
    pop = blocking_job(contracts.Queue.pop)
    pop_many = blocking_jobs(contracts.Queue.pop_many)
    peek = blocking_jobs(contracts.Queue.peek)
    pause = blocking(contracts.Queue.pause)
    unpause = blocking(contracts.Queue.unpause)
    length = blocking(contracts.Queue.length)
    counts = blocking(contracts.Queue.counts)
    stats = blocking(contracts.Queue.stats)
    scaling = blocking(contracts.Queue.scaling)
    jobs = blocking(contracts.Queue.jobs)
    heartbeat = blocking(contracts.Queue.heartbeat)
    set_heartbeat = blocking(contracts.Queue.set_heartbeat)
    throttle = blocking(contracts.Queue.throttle)
    set_throttle = blocking(contracts.Queue.set_throttle)
    set_rate_limit = blocking(contracts.Queue.set_rate_limit)
    unfail = blocking(contracts.Queue.unfail)
    forget = blocking(contracts.Queue.forget)
    groups = blocking(contracts.Queue.groups)
    set_group_weight = blocking(contracts.Queue.set_group_weight)
    set_group_concurrency = blocking(contracts.Queue.set_group_concurrency)
    set_group_rate_limit = blocking(contracts.Queue.set_group_rate_limit)


class SyncQueue(QueueFacade):
    """A named queue (``aqless.Queue``'s verbs, blocking)."""

    put = blocking(contracts.Queue.put)
    put_result = blocking(contracts.Queue.put_result)
    put_many = blocking(contracts.Queue.put_many)
    put_many_results = blocking(contracts.Queue.put_many_results)


class SyncShardedQueue(QueueFacade):
    """A queue of a sharded deployment (``aqless.ShardedQueue``'s verbs, blocking): its puts
    take a `route`, a routing key whose jobs share one shard."""

    documented_by: ClassVar[type | None] = ShardedQueue

    put = blocking(ShardedQueue.put)
    put_result = blocking(ShardedQueue.put_result)
    put_many = blocking(ShardedQueue.put_many)
    put_many_results = blocking(ShardedQueue.put_many_results)


# -- jobs -----------------------------------------------------------------------------------


class SyncJobs(Facade):
    """Jobs by id, tag, tracking, completion and failure (``aqless.Jobs``'s, blocking)."""

    documented_by: ClassVar[type | None] = Jobs

    def __init__(self, client: BlockingClient[Any]) -> None:
        super().__init__(client, lambda loop_client: loop_client.jobs)

    get = blocking_found(contracts.Jobs.get)
    get_many = blocking_jobs(contracts.Jobs.get_many)
    stored_result = blocking(contracts.Jobs.stored_result)
    progress = blocking(contracts.Jobs.progress)
    checkpoints = blocking(contracts.Jobs.checkpoints)
    tagged = blocking(contracts.Jobs.tagged)
    completed = blocking(contracts.Jobs.completed)
    failed = blocking(contracts.Jobs.failed)
    failure_groups = blocking(contracts.Jobs.failure_groups)
    cancel = blocking(contracts.Jobs.cancel)

    def tracked(self) -> tuple[list[SyncJob], list[str]]:
        """The tracked jobs, and the jids tracked that no longer exist."""
        jobs, gone = self._run("tracked", (), {})
        return list(jobs), list(gone)


class _Field(Generic[T]):
    """An attribute of the wrapped ``Job`` or ``RecurringJob`` handle, read from it at each
    access (its verbs update it)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type) -> Self: ...
    @overload
    def __get__(self, instance: object, owner: type) -> T: ...
    def __get__(self, instance: object | None, owner: type) -> Self | T:
        if instance is None:
            return self
        return cast(T, getattr(instance._job, self.name))  # type: ignore[attr-defined]


J = TypeVar("J", Job, RecurringJob)


class HandleFacade(Facade, Generic[J]):
    """A handle on a job or template, whose verbs go to the loop's client it belongs to (a
    sharded deployment's shard that holds it)."""

    def __init__(self, client: BlockingClient[Any], job: J) -> None:
        super().__init__(client, lambda loop_client: job)
        self._job: J = job

    async def _target(self, client: Any) -> J:
        self._job._client = await self._client._job_client(client, self._job)
        return self._job


class SyncJob(HandleFacade[Job]):
    """A handle on a job, with blocking verbs: ``aqless.Job``'s attributes (the same plain
    values, as last read or as its verbs changed them) and verbs, which go to the client it
    was read from."""

    documented_by: ClassVar[type | None] = Job

    jid: _Field[str] = _Field()
    klass_name: _Field[str] = _Field()
    queue_name: _Field[str] = _Field()
    data: _Field[Any] = _Field()
    priority: _Field[float] = _Field()
    tags: _Field[tuple[str, ...]] = _Field()
    state: _Field[JobState | str] = _Field()
    worker_name: _Field[str] = _Field()
    expires_at: _Field[float] = _Field()
    history: _Field[tuple[HistoryEntry, ...]] = _Field()
    dependencies: _Field[tuple[str, ...]] = _Field()
    dependents: _Field[tuple[str, ...]] = _Field()
    original_retries: _Field[int] = _Field()
    retries_left: _Field[int] = _Field()
    failure: _Field[Failure | None] = _Field()
    tracked: _Field[bool] = _Field()
    throttles: _Field[tuple[str, ...]] = _Field()
    spawned_from_jid: _Field[str | None] = _Field()
    attempt: _Field[int | None] = _Field()
    checkpointed: _Field[Any] = _Field()
    released: _Field[bool] = _Field()

    def __repr__(self) -> str:
        return f"<SyncJob {self.jid} {self.klass_name} {self.state} in {self.queue_name!r}>"

    complete = blocking(contracts.Job.complete)
    fail = blocking(contracts.Job.fail)
    retry = blocking(contracts.Job.retry)
    heartbeat = blocking(contracts.Job.heartbeat)
    checkpoint = blocking(contracts.Job.checkpoint)
    progress = blocking(contracts.Job.progress)
    hand_back = blocking(contracts.Job.hand_back)
    timeout = blocking(contracts.Job.timeout)
    cancel = blocking(contracts.Job.cancel)
    move = blocking(contracts.Job.move)
    requeue = blocking(contracts.Job.requeue)
    tag = blocking(contracts.Job.tag)
    untag = blocking(contracts.Job.untag)
    track = blocking(contracts.Job.track)
    untrack = blocking(contracts.Job.untrack)
    set_priority = blocking(contracts.Job.set_priority)
    depend = blocking(contracts.Job.depend)
    undepend = blocking(contracts.Job.undepend)
    log = blocking(contracts.Job.log)
    wait = blocking(contracts.Job.wait)
    result = blocking(contracts.Job.result)
    children_results = blocking(contracts.Job.children_results)
    refresh = blocking_refreshed(contracts.Job.refresh)


class SyncRecurringJob(HandleFacade[RecurringJob]):
    """A recurring job's template (``aqless.RecurringJob``'s attributes and verbs)."""

    documented_by: ClassVar[type | None] = RecurringJob

    jid: _Field[str] = _Field()
    klass_name: _Field[str] = _Field()
    queue_name: _Field[str] = _Field()
    data: _Field[Any] = _Field()
    priority: _Field[float] = _Field()
    interval: _Field[float] = _Field()
    retries: _Field[int] = _Field()
    count: _Field[int] = _Field()
    backlog: _Field[int] = _Field()
    tags: _Field[tuple[str, ...]] = _Field()
    throttles: _Field[tuple[str, ...]] = _Field()
    cron: _Field[str | None] = _Field()
    tz: _Field[str] = _Field()

    def __repr__(self) -> str:
        every = f"on {self.cron!r} {self.tz}" if self.cron else f"every {self.interval}s"
        return f"<SyncRecurringJob {self.jid} {self.klass_name} {every}>"

    next_runs = blocking(contracts.RecurringJob.next_runs)
    update = blocking(contracts.RecurringJob.update)
    tag = blocking(contracts.RecurringJob.tag)
    untag = blocking(contracts.RecurringJob.untag)
    cancel = blocking(contracts.RecurringJob.cancel)


# -- settings, workers, tags, limits ---------------------------------------------------------


class SyncConfig(Facade):
    """The deployment's settings (written to every shard of a sharded one)."""

    documented_by: ClassVar[type | None] = Config

    def __init__(self, client: BlockingClient[Any]) -> None:
        super().__init__(client, lambda loop_client: loop_client.config)

    get = blocking(contracts.Config.get)
    set = blocking(contracts.Config.set)
    unset = blocking(contracts.Config.unset)
    all = blocking(contracts.Config.all)


class SyncWorkers(Facade):
    """The workers the server has seen."""

    documented_by: ClassVar[type | None] = Workers

    def __init__(self, client: BlockingClient[Any]) -> None:
        super().__init__(client, lambda loop_client: loop_client.workers)

    counts = blocking(contracts.Workers.counts)
    jobs = blocking(contracts.Workers.jobs)
    forget = blocking(contracts.Workers.forget)
    records = blocking(contracts.Workers.records)
    seen = blocking(contracts.Workers.seen)


class SyncFlows(Facade):
    """Trees and chains of jobs put in one atomic call (``aqless.flows.Flows``'s verbs,
    blocking)."""

    documented_by: ClassVar[type | None] = Flows

    def __init__(self, client: BlockingClient[Any]) -> None:
        super().__init__(client, lambda loop_client: loop_client.flows)

    put = blocking(contracts.Flows.put)
    chain = blocking(contracts.Flows.chain)
    tree = blocking(contracts.Flows.tree)


class SyncTags(Facade):
    """The tags in use, most used first."""

    documented_by: ClassVar[type | None] = Tags

    def __init__(self, client: BlockingClient[Any]) -> None:
        super().__init__(client, lambda loop_client: loop_client.tags)

    top = blocking(contracts.Tags.top)


class SyncBatches(Facade):
    """N jobs tracked as one, with callback jobs when they end (``client.batches``)."""

    documented_by: ClassVar[type | None] = Batches

    def __init__(self, client: BlockingClient[Any]) -> None:
        super().__init__(client, lambda loop_client: loop_client.batches)

    put = blocking(contracts.Batches.put)
    get = blocking(contracts.Batches.get)
    recent = blocking(contracts.Batches.recent)


class SyncQueuePatterns(Facade):
    """Queue identifiers and priority patterns."""

    documented_by: ClassVar[type | None] = QueuePatterns

    def __init__(self, client: BlockingClient[Any]) -> None:
        super().__init__(client, lambda loop_client: loop_client.queue_patterns)

    identifiers = blocking(contracts.QueuePatterns.identifiers)
    set_identifiers = blocking(contracts.QueuePatterns.set_identifiers)
    priorities = blocking(contracts.QueuePatterns.priorities)
    set_priorities = blocking(contracts.QueuePatterns.set_priorities)


class SyncThrottle(Facade):
    """A named concurrency limit (``aqless.Throttle``'s verbs)."""

    documented_by: ClassVar[type | None] = Throttle

    def __init__(self, client: BlockingClient[Any], name: str) -> None:
        self.name = name
        super().__init__(client, lambda loop_client: loop_client.throttles[name])

    def __repr__(self) -> str:
        return f"<SyncThrottle {self.name}>"

    get = blocking(contracts.Throttle.get)
    set = blocking(contracts.Throttle.set)
    delete = blocking(contracts.Throttle.delete)
    locks = blocking(contracts.Throttle.locks)
    pending = blocking(contracts.Throttle.pending)
    release = blocking(contracts.Throttle.release)


class SyncThrottles(Facade):
    """``client.throttles[name]`` (no I/O)."""

    def __init__(self, client: BlockingClient[Any]) -> None:
        super().__init__(client, lambda loop_client: loop_client.throttles)

    def __getitem__(self, name: str) -> SyncThrottle:
        return SyncThrottle(self._client, name)


class SyncRateLimit(Facade):
    """One limiter (no I/O to make): ``get()``, ``set(limit, per=s)``, ``delete()``."""

    documented_by: ClassVar[type | None] = RateLimit

    @property
    def id(self) -> str:
        """The limiter's id (``q:<queue>`` for a queue's own)."""
        limiter: contracts.RateLimit = self._reach(self._client._current().client)
        return limiter.id

    def __repr__(self) -> str:
        return f"<SyncRateLimit {self.id}>"

    get = blocking(contracts.RateLimit.get)
    set = blocking(contracts.RateLimit.set)
    delete = blocking(contracts.RateLimit.delete)


class SyncRateLimits(Facade):
    """The rate limits: ``client.rate_limits["api"].get()``, a queue's own, and ``.all()``."""

    documented_by: ClassVar[type | None] = RateLimits

    def __init__(self, client: BlockingClient[Any]) -> None:
        super().__init__(client, lambda loop_client: loop_client.rate_limits)

    def __getitem__(self, name: str) -> SyncRateLimit:
        checked_limit_name(name)  # refused here, as the async client refuses it
        return SyncRateLimit(self._client, lambda client: client.rate_limits[name])

    def of_queue(self, queue: str) -> SyncRateLimit:
        """The queue's own limiter."""
        return SyncRateLimit(self._client, lambda client: client.rate_limits.of_queue(queue))

    all = blocking(contracts.RateLimits.all)


# -- events ---------------------------------------------------------------------------------


class SyncEvents:
    """The server's events, blocking: ``with client.events("completed") as events:``, then
    ``for event in events`` (or ``events.next(timeout=...)``). Subscribed on entering,
    unsubscribed on leaving."""

    def __init__(
        self, client: BlockingClient[Any], channels: tuple[str, ...], workers: Sequence[str]
    ) -> None:
        self._client = client
        self._channels = channels
        self._workers = tuple(workers)
        self._stream: contracts.EventStream | None = None

    def __enter__(self) -> Self:
        async def subscribed(client: contracts.Client) -> contracts.EventStream:
            stream = client.events(*self._channels, workers=self._workers)
            return await stream.__aenter__()

        self._stream = self._client.call(subscribed)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __iter__(self) -> Self:
        return self

    def __next__(self) -> Event:
        return self.next()

    def next(self, *, timeout: float | None = None) -> Event:
        """The next event; TimeoutError after `timeout` seconds without one."""
        stream = self._stream
        if stream is None:
            raise RuntimeError("enter the event stream first: with client.events(...) as events")

        async def following(client: contracts.Client) -> Event | None:
            try:
                return await stream.__anext__()
            except StopAsyncIteration:  # a coroutine may not raise StopIteration
                return None

        event = self._client.call(following, timeout=timeout)
        if event is None:
            raise StopIteration
        return event

    def close(self) -> None:
        """Unsubscribe (idempotent)."""
        stream, self._stream = self._stream, None
        if stream is not None:

            async def closed(client: contracts.Client) -> None:
                await stream.aclose()

            self._client.call(closed)
