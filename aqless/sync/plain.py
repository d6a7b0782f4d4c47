"""A blocking client for sync code (Django, Flask, scripts): ``aqless.sync.Client``.

One event loop runs on a daemon thread owned by the client, holding one ``aqless.Client``
(``aqless.ShardedClient`` for ``aqless.sync.ShardedClient``, in aqless.sync.sharded);
each blocking call hands a coroutine to it (``asyncio.run_coroutine_threadsafe``) and waits
for its result. Calls from any number of threads therefore share one set of connections and
need no lock of their own. Nothing async reaches the caller: replies are plain values, and
jobs are ``SyncJob`` snapshots whose verbs block.

After ``os.fork()`` (gunicorn's ``--preload``) the child has neither the thread nor a safe
use of the parent's sockets: its first call starts a loop and connections of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import os
import threading
import weakref
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, Protocol, Self, TypeVar, Unpack, cast, overload

from aqless import client as aio
from aqless.errors import ConfigurationError
from aqless.job import Job, RecurringJob
from aqless.limits import RateLimit, RateLimitInfo
from aqless.models import (
    Failure,
    HistoryEntry,
    JobState,
    Page,
    QueueCounts,
    QueueStats,
    RecurringChanges,
    WorkerCounts,
    WorkerJobs,
)
from aqless.progress import Progress
from aqless.puts import JobClass, PutOptions, PutRequest, PutResult
from aqless.queue import checked_name
from aqless.results import JobResult

if TYPE_CHECKING:
    from aqless.sharding.client import AnyClient

T = TypeVar("T")
J = TypeVar("J", Job, RecurringJob)


class AsyncClient(Protocol):
    """What a blocking client holds on its loop: ``aqless.Client`` or ``ShardedClient``."""

    async def open(self) -> object: ...
    async def close(self) -> None: ...
    async def wait(self, jid: str, *, timeout: float | None = None) -> JobState | None: ...
    async def result(self, jid: str, *, timeout: float | None = None) -> Any: ...


C = TypeVar("C", bound=AsyncClient)

#: How long closing (the client's connections, then the loop's thread) may take.
CLOSE_TIMEOUT = 5.0


def _new_loop() -> asyncio.AbstractEventLoop:
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


class _Runtime(Generic[C]):
    """One loop on one daemon thread, and the async client living on it, for the process
    that made them."""

    def __init__(self, make: Callable[[], C]) -> None:
        self.pid = os.getpid()
        self.loop = _new_loop()
        self.thread = threading.Thread(
            target=self.loop.run_forever, name="aqless-sync", daemon=True
        )
        self.thread.start()
        self.opened: asyncio.Future[object] | None = None
        try:  # made on the loop: whatever it builds belongs to that loop
            self.client = self.run(self._make(make), None)
        except BaseException:
            self.stop()
            raise

    @staticmethod
    async def _make(make: Callable[[], C]) -> C:
        return make()

    def run(self, coroutine: Awaitable[T], timeout: float | None) -> T:
        if threading.current_thread() is self.thread:
            raise ConfigurationError("a sync aqless client cannot be called from its own loop")
        future = asyncio.run_coroutine_threadsafe(_awaited(coroutine), self.loop)
        try:
            return future.result(timeout)
        except BaseException:  # out of time, or the caller interrupted (Ctrl-C): stop it
            future.cancel()
            raise

    async def open_client(self) -> C:
        """The client, opened once (the embedded server, the eviction check); tried again
        by the next call after a failure."""
        opened = self.opened
        if opened is None or (opened.done() and (opened.cancelled() or opened.exception())):
            opened = self.opened = asyncio.ensure_future(self.client.open())
        await asyncio.shield(opened)
        return self.client

    def close(self) -> None:
        """Close the client and stop the loop, within CLOSE_TIMEOUT. In a forked child the
        parent's loop and sockets are left alone: they are not this process's to close."""
        if os.getpid() != self.pid or self.loop.is_closed():
            return
        if self.thread.is_alive():
            with contextlib.suppress(Exception):  # at exit: no one is left to tell
                self.run(self.client.close(), CLOSE_TIMEOUT)
        self.stop()

    def stop(self) -> None:
        if self.thread.is_alive():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(CLOSE_TIMEOUT)
        if not self.thread.is_alive():
            self.loop.close()


async def _awaited(awaitable: Awaitable[T]) -> T:
    return await awaitable


class BlockingClient(ABC, Generic[C]):
    """What every blocking client shares: the runtime of this process (a new one after a
    fork), `call`, `wait`, `result` and closing. A subclass says how its async client is
    made (`_make`) and which of its clients a job snapshot's verbs go to (`_job_client`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._closed = False
        self._runtime = self._start()
        self._finalizer = weakref.finalize(self, self._runtime.close)
        _LIVE.add(self)

    @abstractmethod
    def _make(self) -> C:
        """The async client, made on the loop."""

    @abstractmethod
    async def _job_client(self, client: C, job: Job | RecurringJob) -> aio.Client:
        """The client of `client` (the loop's) that a job read earlier belongs to."""

    def _start(self) -> _Runtime[C]:
        return _Runtime(self._make)

    def _current(self) -> _Runtime[C]:
        """This process's runtime: a fresh one after a fork."""
        with self._lock:
            if self._closed:
                raise ConfigurationError("this client is closed; make a new one")
            if self._runtime.pid != os.getpid():
                self._finalizer.detach()  # the parent's: never closed from here
                self._runtime = self._start()
                self._finalizer = weakref.finalize(self, self._runtime.close)
            return self._runtime

    def call(self, verb: Callable[[C], Awaitable[T]], *, timeout: float | None = None) -> T:
        """Run ``verb(async_client)`` on the client's loop and return its result: for what
        this module does not wrap (``client.call(lambda c: c.config.get("heartbeat"))``).
        Hand back plain values only: an async object is of no use outside the loop."""
        runtime = self._current()

        async def called() -> T:
            return await verb(await runtime.open_client())

        return runtime.run(called(), timeout)

    def _on_job(self, job: J, verb: Callable[[J], Awaitable[T]]) -> T:
        """Run a verb of a job snapshot, bound to the loop's client it belongs to (a new
        one after a fork)."""

        async def bound(client: C) -> T:
            job._client = await self._job_client(client, job)
            return await verb(job)

        return self.call(bound)

    def wait(self, jid: str, *, timeout: float | None = None) -> JobState | None:
        """Block until the job completes or fails (its final state); None if it was
        cancelled or is gone. TimeoutError after `timeout` seconds."""
        return self.call(lambda client: client.wait(jid, timeout=timeout))

    def result(self, jid: str, *, timeout: float | None = None) -> Any:
        """Block until the job finishes and return its handler's return value, or raise
        why there is none (see ``aqless.Client.result``)."""
        return self.call(lambda client: client.result(jid, timeout=timeout))

    def close(self) -> None:
        """Release every connection and stop the loop's thread (idempotent)."""
        with self._lock:
            self._closed = True
        self._finalizer()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


class Client(BlockingClient[aio.Client]):
    """A blocking ``aqless.Client``: ``aqless.sync.Client(url, **options)`` takes the same
    arguments and checks them here (ConfigurationError), before anything connects.

    Safe to share between threads (make one per process, e.g. at import time of a Django
    or Flask app). Connects on the first call; ``close()`` (or ``with``) releases
    everything, and a client still open at interpreter exit is closed then. The errors
    are aqless's own (``JobNotFoundError``, ``ConnectionLostError``...).
    """

    def __init__(self, url: str | None = None, **options: Any) -> None:
        self._url = url
        self._options = options
        super().__init__()
        self.queues = SyncQueues(self)
        self.jobs = SyncJobs(self)
        self.workers = SyncWorkers(self)
        self.rate_limits = SyncRateLimits(self)

    def _make(self) -> aio.Client:
        return aio.Client(self._url, **self._options)

    async def _job_client(self, client: aio.Client, job: Job | RecurringJob) -> aio.Client:
        return client

    @property
    def url(self) -> str | None:
        """The server's URL (the embedded one's once the first call has started it)."""
        return self._current().client.url

    def __repr__(self) -> str:
        return f"<aqless.sync.Client {self._url or 'default'}>"


# clients alive in this process; after a fork, each gets a new lock (the parent's may have
# been held by a thread that does not exist in the child)
_LIVE: weakref.WeakSet[BlockingClient[Any]] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for client in list(_LIVE):
        client._lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)


class QueueNames:
    """Every queue's names and counts, blocking, of a plain or a sharded client (summed
    over the shards)."""

    def __init__(self, client: BlockingClient[Any]) -> None:
        self._client = client

    def _on(self, action: Callable[[AnyClient], Awaitable[T]]) -> T:
        return self._client.call(action)

    def names(self) -> list[str]:
        return self._on(lambda client: client.queues.names())

    def counts(self) -> list[QueueCounts]:
        return self._on(lambda client: client.queues.counts())


class SyncQueues(QueueNames):
    """``client.queues[name]`` (no I/O), and every queue's names and counts."""

    def __getitem__(self, name: str) -> SyncQueue:
        return SyncQueue(self._client, name)


class QueueReads:
    """A named queue's recurring jobs and reads, blocking, the same on a plain and a
    sharded client (``aqless.Queue``'s and ``aqless.ShardedQueue``'s)."""

    def __init__(self, client: BlockingClient[Any], name: str) -> None:
        self._client = client
        self.name = checked_name(name)

    def _on(self, action: Callable[[AnyClient], Awaitable[T]]) -> T:
        return self._client.call(action)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"

    def recur(
        self,
        klass: JobClass,
        data: Any = None,
        interval: float | None = None,
        *,
        jid: str | None = None,
        offset: float = 0,
        priority: float | None = None,
        tags: Sequence[str] | None = None,
        retries: int | None = None,
        backlog: int | None = None,
        throttles: Sequence[str] | None = None,
        cron: str | None = None,
        tz: str = "UTC",
    ) -> str:
        """Spawn a job every `interval` seconds, or at the times of a `cron` expression in
        time zone `tz`; returns the recurring job's id (see ``aqless.Queue.recur``; on a
        sharded deployment, on the shard of its jid, or of its throttles)."""
        return self._on(
            lambda client: client.queues[self.name].recur(
                klass,
                data,
                interval,
                jid=jid,
                offset=offset,
                priority=priority,
                tags=tags,
                retries=retries,
                backlog=backlog,
                throttles=throttles,
                cron=cron,
                tz=tz,
            )
        )

    def length(self) -> int:
        """Waiting, scheduled and running jobs (on every shard of a sharded deployment)."""
        return self._on(lambda client: client.queues[self.name].length())

    def counts(self) -> QueueCounts:
        """The queue's counts (summed over the shards of a sharded deployment)."""
        return self._on(lambda client: client.queues[self.name].counts())

    def stats(self, date: datetime.date | float | None = None) -> QueueStats:
        """The queue's day (every shard's, merged, on a sharded deployment)."""
        return self._on(lambda client: client.queues[self.name].stats(date))

    def jobs(self, state: JobState | str, *, offset: int = 0, count: int = 25) -> list[str]:
        return self._on(
            lambda client: client.queues[self.name].jobs(state, offset=offset, count=count)
        )

    def peek(self, count: int = 1, *, offset: int = 0) -> list[SyncJob]:
        jobs = self._on(lambda client: client.queues[self.name].peek(count, offset=offset))
        return [SyncJob(self._client, job) for job in jobs]


class SyncQueue(QueueReads):
    """A named queue's producer verbs and reads (``aqless.Queue``'s, blocking)."""

    _client: Client

    def put(self, klass: JobClass, data: Any = None, **options: Unpack[PutOptions]) -> str:
        """Put a job into this queue; returns its jid (see ``aqless.Queue.put``)."""
        return self._client.call(
            lambda client: client.queues[self.name].put(klass, data, **options)
        )

    def put_result(
        self, klass: JobClass, data: Any = None, **options: Unpack[PutOptions]
    ) -> PutResult:
        """`put`, telling whether it was deduplicated (see ``aqless.Queue.put_result``)."""
        return self._client.call(
            lambda client: client.queues[self.name].put_result(klass, data, **options)
        )

    def put_many(self, requests: Iterable[PutRequest], *, batch: int = 1000) -> list[str]:
        """Put many ``aqless.PutRequest`` jobs, pipelined; returns their jids."""
        listed = list(requests)
        return self._client.call(
            lambda client: client.queues[self.name].put_many(listed, batch=batch)
        )

    def put_many_results(
        self, requests: Iterable[PutRequest], *, batch: int = 1000
    ) -> list[PutResult]:
        """`put_many`, telling what each put did (see ``aqless.Queue.put_many_results``)."""
        listed = list(requests)
        return self._client.call(
            lambda client: client.queues[self.name].put_many_results(listed, batch=batch)
        )

    @property
    def rate_limit(self) -> SyncRateLimit:
        """This queue's own rate limit (no I/O): ``queue.rate_limit.get()``."""
        limiter = self._client._current().client.rate_limits.of_queue(self.name)
        return SyncRateLimit(self._client, limiter.id)


class JobLookups:
    """Jobs by id, blocking, of a plain or a sharded client (which asks only the shards
    a jid's bucket names)."""

    def __init__(self, client: BlockingClient[Any]) -> None:
        self._client = client

    def _on(self, action: Callable[[AnyClient], Awaitable[T]]) -> T:
        return self._client.call(action)

    def get(self, jid: str) -> SyncJob | SyncRecurringJob | None:
        """The job or recurring job with this id, or None."""
        found = self._on(lambda client: client.jobs.get(jid))
        if isinstance(found, Job):
            return SyncJob(self._client, found)
        if isinstance(found, RecurringJob):
            return SyncRecurringJob(self._client, found)
        return None

    def get_many(self, jids: Sequence[str]) -> list[SyncJob]:
        """The jobs that exist among `jids`, in order."""
        jobs = self._on(lambda client: client.jobs.get_many(jids))
        return [SyncJob(self._client, job) for job in jobs]

    def cancel(self, *jids: str) -> None:
        """Cancel several jobs in one call (jobs that depend on each other go together)."""
        self._on(lambda client: client.jobs.cancel(*jids))


class SyncJobs(JobLookups):
    """Jobs by id, tag, completion and failure (``aqless.Jobs``'s reads, blocking)."""

    _client: Client

    def stored_result(self, jid: str) -> JobResult | None:
        """The job's kept return value and state now, without waiting; None when the job
        does not exist."""
        return self._client.call(lambda client: client.jobs.stored_result(jid))

    def progress(self, *jids: str) -> dict[str, Progress]:
        """The last progress report of each job among `jids` that made one."""
        return self._client.call(lambda client: client.jobs.progress(*jids))

    def tagged(self, tag: str, *, offset: int = 0, count: int = 25) -> Page:
        return self._client.call(lambda client: client.jobs.tagged(tag, offset=offset, count=count))

    def completed(self, *, offset: int = 0, count: int = 25) -> list[str]:
        return self._client.call(lambda client: client.jobs.completed(offset=offset, count=count))

    def failed(self, group: str, *, offset: int = 0, count: int = 25) -> Page:
        return self._client.call(
            lambda client: client.jobs.failed(group, offset=offset, count=count)
        )

    def failure_groups(self) -> dict[str, int]:
        return self._client.call(lambda client: client.jobs.failure_groups())


class SyncWorkers:
    """The workers the server has seen."""

    def __init__(self, client: Client) -> None:
        self._client = client

    def counts(self) -> list[WorkerCounts]:
        return self._client.call(lambda client: client.workers.counts())

    def jobs(self, worker: str) -> WorkerJobs:
        return self._client.call(lambda client: client.workers.jobs(worker))


class SyncRateLimits:
    """The rate limits: ``client.rate_limits["api"].get()`` and ``.all()``."""

    def __init__(self, client: Client) -> None:
        self._client = client

    def __getitem__(self, name: str) -> SyncRateLimit:
        return SyncRateLimit(self._client, self._client._current().client.rate_limits[name].id)

    def all(self) -> list[RateLimitInfo]:
        """Every limit set, queues' and named ones, by id."""
        return self._client.call(lambda client: client.rate_limits.all())


class SyncRateLimit:
    """One limiter (no I/O to make): ``get()``, ``set(limit, per=s)``, ``delete()``."""

    def __init__(self, client: Client, id: str) -> None:
        self._client = client
        self.id = id

    def __repr__(self) -> str:
        return f"<SyncRateLimit {self.id}>"

    def get(self) -> RateLimitInfo:
        """Its limit, the starts in the current window and the wait for the next one."""
        return self._client.call(lambda client: RateLimit(client, self.id).get())

    def set(self, limit: int, *, per: float = 1.0) -> None:
        """Start at most `limit` jobs in any `per` seconds (see ``aqless.RateLimit.set``)."""
        self._client.call(lambda client: RateLimit(client, self.id).set(limit, per=per))

    def delete(self) -> None:
        """Lift the limit (and forget the starts it counted)."""
        self._client.call(lambda client: RateLimit(client, self.id).delete())


class _Snapshot(Generic[T]):
    """An attribute read from the wrapped ``Job`` or ``RecurringJob``, whose verbs keep
    it current."""

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


class SyncJob:
    """A job as the server held it when read, with blocking verbs (``aqless.Job``'s
    attributes, the same plain values)."""

    jid: _Snapshot[str] = _Snapshot()
    klass_name: _Snapshot[str] = _Snapshot()
    queue_name: _Snapshot[str] = _Snapshot()
    data: _Snapshot[Any] = _Snapshot()
    priority: _Snapshot[float] = _Snapshot()
    tags: _Snapshot[tuple[str, ...]] = _Snapshot()
    state: _Snapshot[JobState | str] = _Snapshot()
    worker_name: _Snapshot[str] = _Snapshot()
    expires_at: _Snapshot[float] = _Snapshot()
    history: _Snapshot[tuple[HistoryEntry, ...]] = _Snapshot()
    dependencies: _Snapshot[tuple[str, ...]] = _Snapshot()
    dependents: _Snapshot[tuple[str, ...]] = _Snapshot()
    original_retries: _Snapshot[int] = _Snapshot()
    retries_left: _Snapshot[int] = _Snapshot()
    failure: _Snapshot[Failure | None] = _Snapshot()
    tracked: _Snapshot[bool] = _Snapshot()
    throttles: _Snapshot[tuple[str, ...]] = _Snapshot()
    spawned_from_jid: _Snapshot[str | None] = _Snapshot()

    def __init__(self, client: BlockingClient[Any], job: Job) -> None:
        self._client = client
        self._job = job

    def __repr__(self) -> str:
        return f"<SyncJob {self.jid} {self.klass_name} {self.state} in {self.queue_name!r}>"

    def _verb(self, verb: Callable[[Job], Awaitable[T]]) -> T:
        return self._client._on_job(self._job, verb)

    def cancel(self) -> None:
        """Delete the job (refused while other jobs depend on it)."""
        self._verb(lambda job: job.cancel())

    def complete(self, next_queue: str | None = None, *, result: Any = None) -> JobState:
        """Finish a job this client popped, keeping `result`, or move it on to
        `next_queue` (see ``aqless.Job.complete``)."""
        return self._verb(lambda job: job.complete(next_queue, result=result))

    def fail(self, group: str, message: str) -> None:
        """Fail a job this client popped into `group`, with a message."""
        self._verb(lambda job: job.fail(group, message))

    def heartbeat(self) -> float:
        """Renew the lock of a job this client popped; the new expiry time."""
        return self._verb(lambda job: job.heartbeat())

    def wait(self, timeout: float | None = None) -> JobState | None:
        """Block until the job completes or fails; None if it was cancelled."""
        return self._client.wait(self.jid, timeout=timeout)

    def result(self, timeout: float | None = None) -> Any:
        """Block until the job finishes and return its handler's return value, or raise
        why there is none (see ``aqless.Client.result``)."""
        return self._client.result(self.jid, timeout=timeout)

    def refresh(self) -> SyncJob:
        """The job as the server holds it now."""
        return SyncJob(self._client, self._verb(lambda job: job.refresh()))

    def move(self, queue: str, *, delay: float = 0, priority: float | None = None) -> None:
        """Put the job into `queue` again, keeping its data."""
        self._verb(lambda job: job.move(queue, delay=delay, priority=priority))

    def tag(self, *tags: str) -> tuple[str, ...]:
        return self._verb(lambda job: job.tag(*tags))

    def untag(self, *tags: str) -> tuple[str, ...]:
        return self._verb(lambda job: job.untag(*tags))

    def track(self) -> bool:
        return self._verb(lambda job: job.track())

    def untrack(self) -> bool:
        return self._verb(lambda job: job.untrack())

    def set_priority(self, priority: float) -> None:
        self._verb(lambda job: job.set_priority(priority))

    def log(self, message: str, **data: Any) -> None:
        self._verb(lambda job: job.log(message, **data))


class SyncRecurringJob:
    """A recurring job's template (``aqless.RecurringJob``'s attributes and verbs)."""

    jid: _Snapshot[str] = _Snapshot()
    klass_name: _Snapshot[str] = _Snapshot()
    queue_name: _Snapshot[str] = _Snapshot()
    data: _Snapshot[Any] = _Snapshot()
    priority: _Snapshot[float] = _Snapshot()
    interval: _Snapshot[float] = _Snapshot()
    retries: _Snapshot[int] = _Snapshot()
    count: _Snapshot[int] = _Snapshot()
    backlog: _Snapshot[int] = _Snapshot()
    tags: _Snapshot[tuple[str, ...]] = _Snapshot()
    throttles: _Snapshot[tuple[str, ...]] = _Snapshot()
    cron: _Snapshot[str | None] = _Snapshot()
    tz: _Snapshot[str] = _Snapshot()

    def __init__(self, client: BlockingClient[Any], job: RecurringJob) -> None:
        self._client = client
        self._job = job

    def __repr__(self) -> str:
        every = f"on {self.cron!r} {self.tz}" if self.cron else f"every {self.interval}s"
        return f"<SyncRecurringJob {self.jid} {self.klass_name} {every}>"

    def next_runs(self, count: int = 5) -> list[datetime.datetime]:
        """When it spawns next (the next `count` times), in its time zone."""
        return self._client._on_job(self._job, lambda job: job.next_runs(count))

    def update(self, **changes: Unpack[RecurringChanges]) -> None:
        """Change the template, and read it again (see ``aqless.RecurringJob.update``)."""
        self._client._on_job(self._job, lambda job: job.update(**changes))

    def tag(self, *tags: str) -> tuple[str, ...]:
        """Add tags for the jobs it spawns from now on; returns all of them."""
        return self._client._on_job(self._job, lambda job: job.tag(*tags))

    def untag(self, *tags: str) -> tuple[str, ...]:
        """Remove tags; returns the tags left."""
        return self._client._on_job(self._job, lambda job: job.untag(*tags))

    def cancel(self) -> None:
        """Stop spawning (jobs already spawned are left alone)."""
        self._client._on_job(self._job, lambda job: job.cancel())
