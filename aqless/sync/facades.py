"""The blocking façades' machinery, written once for plain and sharded clients, and the
façades of a job read earlier (the others are in aqless.sync.parts).

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
from aqless.errors import PartialPopError
from aqless.events import Event
from aqless.job import Job, RecurringJob
from aqless.models import Failure, HistoryEntry, JobState, Overlap

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

    def doc(self, owner: type) -> str | None:
        """The verb's docstring on `owner`: its `documented_by` class's verb says more than
        the contract's (a derived verb is declared on a base, so this is read at use)."""
        documented = getattr(owner, "documented_by", None)
        verb = None if documented is None else getattr(documented, self.name, None)
        return getattr(verb, "__doc__", None) or self.__doc__

    def _method(self, owner: type) -> Callable[..., R]:
        """The verb as a plain method of `owner`: what help() and the reference show."""
        name = self.name

        def method(facade: Facade, /, *args: Any, **kwargs: Any) -> R:
            return cast(R, facade._run(name, args, kwargs))

        self_parameter = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)
        method.__name__ = name
        method.__qualname__ = f"{owner.__qualname__}.{name}"
        method.__module__ = owner.__module__
        method.__doc__ = self.doc(owner)
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
            return self._method(owner)
        name = self.name

        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            return cast(R, facade._run(name, args, kwargs))

        call.__name__ = name
        call.__doc__ = self.doc(owner)
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
    was read from.

    Examples:
        ```python
        job = client.queues["emails"].pop()
        if job is not None:
            job.complete()
        ```
    """

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
    """A recurring job's template (``aqless.RecurringJob``'s attributes and verbs).

    Examples:
        ```python
        recurring = client.jobs.get(rid)
        recurring.update(interval=300)
        ```
    """

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
    overlap: _Field[Overlap] = _Field()
    catchup: _Field[float] = _Field()
    pause_after: _Field[int] = _Field()
    jitter: _Field[float] = _Field()
    paused: _Field[bool] = _Field()
    failures: _Field[int] = _Field()
    buffered: _Field[int] = _Field()

    def __repr__(self) -> str:
        every = f"on {self.cron!r} {self.tz}" if self.cron else f"every {self.interval}s"
        return f"<SyncRecurringJob {self.jid} {self.klass_name} {every}>"

    next_runs = blocking(contracts.RecurringJob.next_runs)
    update = blocking(contracts.RecurringJob.update)
    tag = blocking(contracts.RecurringJob.tag)
    untag = blocking(contracts.RecurringJob.untag)
    cancel = blocking(contracts.RecurringJob.cancel)
    backfill = blocking(contracts.RecurringJob.backfill)
    pause = blocking(contracts.RecurringJob.pause)
    resume = blocking(contracts.RecurringJob.resume)


# -- events ---------------------------------------------------------------------------------


class SyncEvents:
    """The server's events, blocking: ``with client.events("completed") as events:``, then
    ``for event in events`` (or ``events.next(timeout=...)``). Subscribed on entering,
    unsubscribed on leaving.

    Examples:
        ```python
        with client.events("completed") as events:
            event = events.next(timeout=5)
            print(event.jid)
        ```
    """

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
        """The next event; TimeoutError after `timeout` seconds without one.

        Args:
            timeout: seconds to wait at most (default None: as long as it takes).

        Raises:
            TimeoutError: no event came within `timeout` seconds.
            RuntimeError: the stream was not entered (``with client.events(...) as events``).
            StopIteration: the stream ended (it was closed).

        Examples:
            ```python
            try:
                event = events.next(timeout=5)
            except TimeoutError:
                event = None
            ```
        """
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
        """Unsubscribe (idempotent).

        Examples:
            ```python
            events.close()  # leaving the with block does it too
            ```
        """
        stream, self._stream = self._stream, None
        if stream is not None:

            async def closed(client: contracts.Client) -> None:
                await stream.aclose()

            self._client.call(closed)
