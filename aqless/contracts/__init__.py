"""What a client, its queues, jobs and limits offer, whatever the deployment: typing Protocols.

``aqless.Client`` and ``aqless.ShardedClient`` (and what they hand out: queues, jobs,
config...) satisfy these contracts, and mypy proves it (tests/typing/test_contracts.py). The
blocking clients of ``aqless.sync`` are derived from them: each blocking verb is the contract's
verb, run on the client's loop. Code that should work on any deployment takes a contract:

    async def drain(queue: contracts.Queue) -> None: ...

A verb is declared here once, and the variants derive it from the declaration:
- ``@on_shards(route, merge)``: the sharded variant asks the shards `route` names and merges
  their answers; a verb that hands back jobs is routed on the sharded class instead, so that
  its jobs keep the plain class's type;
- ``@script(command, arguments..., reply=...)``: the plain variant is that one script command;
- the blocking variants derive every verb, but those marked ``@by_hand``.
``python -m aqless.contracts --write`` writes the derived declarations mypy reads
(aqless/contracts/derived.py, aqless/sync/derived.py); tests/typing/test_derived.py fails while
they are not current. A verb without a declaration is written by hand in each variant that
lacks one; tests/test_surface.py fails until every variant offers it (or states why it
cannot).
"""

from __future__ import annotations

import datetime
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, Self, TypeVar, Unpack

from aqless._concurrency.routing import (
    by_jid,
    by_jids,
    every,
    first,
    home,
    latest_first,
    of_group,
    on_shards,
    page,
    paged,
)
from aqless._connection.protocol import Clock, ScriptCaller
from aqless._connection.scripted import script

# How a declaration becomes a verb: `on_shards` and the routes in aqless/_concurrency/routing.py,
# `script` in aqless/_connection/scripted.py.
from aqless.batches.model import DEFAULT_TTL, Batch, BatchCallback, BatchMember, BatchPage
from aqless.models import (
    Failure,
    GroupCounts,
    HistoryEntry,
    JobState,
    Page,
    QueueCounts,
    QueueStats,
    RecurringChanges,
    SeenWorkers,
    ThrottleInfo,
    WorkerCounts,
    WorkerInfo,
    WorkerJobs,
    listed,
)
from aqless.puts import Durable, JobClass, PutOptions, PutRequest, PutResult
from aqless.scaling.estimate import QueueScaling
from aqless.scripts.loader import AnyRedis
from aqless.workflows.signals import Delivery

if TYPE_CHECKING:
    from aqless.codecs import PayloadCodec
    from aqless.events import Event
    from aqless.flows import ChildrenResults, Flow, FlowNode, FlowTree
    from aqless.models import JobResult, PriorityPattern, RateLimitInfo
    from aqless.progress import Progress

__all__ = [
    "Batches",
    "Client",
    "Config",
    "EventStream",
    "Flows",
    "Job",
    "JobFields",
    "Jobs",
    "Queue",
    "QueuePatterns",
    "Queues",
    "RateLimit",
    "RateLimits",
    "RecurringJob",
    "ScriptClient",
    "Tags",
    "Throttle",
    "Throttles",
    "Workers",
]

F = TypeVar("F", bound=Callable[..., Any])


def by_hand(verb: F) -> F:
    """Declare that every variant writes this verb itself (the sharded one takes more
    parameters: a routing key): none derives it."""
    verb.by_hand = True  # type: ignore[attr-defined]
    return verb


class JobFields(Protocol):
    """A job handle's attributes: plain values, as last read or as its own verbs changed
    them (see aqless.Job); reading them does no I/O."""

    @property
    def jid(self) -> str: ...
    @property
    def klass_name(self) -> str: ...
    @property
    def queue_name(self) -> str: ...
    @property
    def data(self) -> Any: ...
    @property
    def priority(self) -> float: ...
    @property
    def tags(self) -> tuple[str, ...]: ...
    @property
    def state(self) -> JobState | str: ...
    @property
    def worker_name(self) -> str: ...
    @property
    def expires_at(self) -> float: ...
    @property
    def history(self) -> tuple[HistoryEntry, ...]: ...
    @property
    def dependencies(self) -> tuple[str, ...]: ...
    @property
    def dependents(self) -> tuple[str, ...]: ...
    @property
    def original_retries(self) -> int: ...
    @property
    def retries_left(self) -> int: ...
    @property
    def failure(self) -> Failure | None: ...
    @property
    def tracked(self) -> bool: ...
    @property
    def throttles(self) -> tuple[str, ...]: ...
    @property
    def spawned_from_jid(self) -> str | None: ...
    @property
    def attempt(self) -> int | None: ...
    @property
    def checkpointed(self) -> Any: ...
    @property
    def released(self) -> bool: ...


class Job(JobFields, Protocol):
    """A job's verbs: those of a worker holding it (complete, fail, retry, heartbeat,
    checkpoint, progress) and those of anyone (cancel, move, tag, track, wait...)."""

    async def complete(
        self,
        next_queue: str | None = None,
        *,
        delay: float | None = None,
        depends: Sequence[str] | None = None,
        result: Any = None,
    ) -> JobState: ...
    async def fail(self, group: str, message: str) -> None: ...
    async def retry(
        self, delay: float = 0, group: str | None = None, message: str | None = None
    ) -> int: ...
    async def heartbeat(self) -> float: ...
    async def checkpoint(self, state: Any) -> float: ...
    async def progress(self, fraction: float, message: str = "") -> None: ...
    async def hand_back(self, reason: str) -> None: ...
    async def timeout(self) -> None: ...
    async def cancel(self) -> None: ...
    async def move(
        self,
        queue: str,
        *,
        delay: float = 0,
        priority: float | None = None,
        tags: Sequence[str] | None = None,
        retries: int | None = None,
        depends: Sequence[str] | None = None,
        throttles: Sequence[str] | None = None,
    ) -> None: ...
    async def requeue(
        self,
        queue: str,
        *,
        delay: float = 0,
        priority: float | None = None,
        tags: Sequence[str] | None = None,
        retries: int | None = None,
        depends: Sequence[str] | None = None,
        throttles: Sequence[str] | None = None,
    ) -> None: ...
    async def tag(self, *tags: str) -> tuple[str, ...]: ...
    async def untag(self, *tags: str) -> tuple[str, ...]: ...
    async def track(self) -> bool: ...
    async def untrack(self) -> bool: ...
    async def set_priority(self, priority: float) -> None: ...
    async def depend(self, *jids: str) -> None: ...
    async def undepend(self, *jids: str, all: bool = False) -> None: ...
    async def log(self, /, message: str, **data: Any) -> None: ...
    async def wait(self, timeout: float | None = None) -> JobState | None: ...
    async def result(self, timeout: float | None = None) -> Any: ...
    async def children_results(self) -> ChildrenResults: ...
    async def refresh(self) -> Job: ...


class RecurringJob(Protocol):
    """A recurring job's template and its verbs."""

    @property
    def jid(self) -> str: ...
    @property
    def klass_name(self) -> str: ...
    @property
    def queue_name(self) -> str: ...
    @property
    def data(self) -> Any: ...
    @property
    def priority(self) -> float: ...
    @property
    def interval(self) -> float: ...
    @property
    def retries(self) -> int: ...
    @property
    def count(self) -> int: ...
    @property
    def backlog(self) -> int: ...
    @property
    def tags(self) -> tuple[str, ...]: ...
    @property
    def throttles(self) -> tuple[str, ...]: ...
    @property
    def cron(self) -> str | None: ...
    @property
    def tz(self) -> str: ...

    async def next_runs(self, count: int = 5) -> list[datetime.datetime]: ...
    async def update(self, **changes: Unpack[RecurringChanges]) -> None: ...
    async def tag(self, *tags: str) -> tuple[str, ...]: ...
    async def untag(self, *tags: str) -> tuple[str, ...]: ...
    async def cancel(self) -> None: ...


class RateLimit(Protocol):
    """One limiter: at most `limit` job starts in any `per` seconds."""

    @property
    def id(self) -> str: ...

    async def get(self) -> RateLimitInfo: ...
    async def set(self, limit: int, *, per: float = 1.0, smooth: bool = False) -> None: ...
    async def delete(self) -> None: ...


class RateLimits(Protocol):
    """``rate_limits["api"]`` (no I/O), a queue's own limiter, and every limit set."""

    def __getitem__(self, name: str) -> RateLimit: ...
    def of_queue(self, queue: str) -> RateLimit: ...
    async def all(self) -> list[RateLimitInfo]: ...


class Throttle(Protocol):
    """A named concurrency limit: at most `maximum` jobs hold it at once.

    Examples:
        ```python
        await client.throttles["smtp"].set(5)
        ```
    """

    @property
    def name(self) -> str: ...

    @script("throttle.get", "self.name", reply=ThrottleInfo.from_json)
    async def get(self) -> ThrottleInfo:
        """This throttle's maximum and expiry.

        Examples:
            ```python
            info = await client.throttles["smtp"].get()
            print(info.maximum, info.ttl)
            ```
        """

    @script("throttle.set", "self.name", "maximum", "expiration")
    async def set(self, maximum: int, *, expiration: int = 0) -> None:
        """At most `maximum` jobs hold it at once (0: unlimited); `expiration` seconds
        later the limit is lifted (0: never).

        Args:
            maximum: jobs holding it at once at most, a whole number from 0.
            expiration: seconds until the limit is lifted, a whole number from 0
                (default 0: never).

        Raises:
            InvalidValueError: `maximum` or `expiration` is not a whole number from 0;
                nothing sent.

        Examples:
            ```python
            await client.throttles["smtp"].set(5)
            await client.throttles["backfill"].set(2, expiration=3600)  # for an hour
            ```
        """

    @script("throttle.delete", "self.name")
    async def delete(self) -> None:
        """Remove this throttle (its holders keep running).

        Examples:
            ```python
            await client.throttles["backfill"].delete()
            ```
        """

    @script("throttle.locks", "self.name", reply=listed)
    async def locks(self) -> list[str]:
        """The jids holding it.

        Examples:
            ```python
            holders = await client.throttles["smtp"].locks()
            ```
        """

    @script("throttle.pending", "self.name", reply=listed)
    async def pending(self) -> list[str]:
        """The jids waiting for it.

        Examples:
            ```python
            waiting = await client.throttles["smtp"].pending()
            ```
        """

    @script("throttle.release", "self.name", "jids")
    async def release(self, *jids: str) -> None:
        """Release the locks the given jobs hold on this throttle.

        Args:
            jids: the jobs whose locks to release.

        Examples:
            ```python
            await client.throttles["smtp"].release(*await client.throttles["smtp"].locks())
            ```
        """


class Throttles(Protocol):
    """``throttles["name"]`` (no I/O).

    Examples:
        ```python
        smtp = client.throttles["smtp"]
        ```
    """

    def __getitem__(self, name: str) -> Throttle: ...


class Queue(Protocol):
    """A named queue: put jobs in, take them out, look at it, pause it, limit it.

    Examples:
        ```python
        emails = client.queues["emails"]
        await emails.put(send_email, {"to": "ada@example.com"})
        job = await emails.pop()
        ```
    """

    @property
    def name(self) -> str: ...
    @property
    def rate_limit(self) -> RateLimit: ...

    @by_hand
    async def put(
        self,
        klass: JobClass,
        data: Any = None,
        *,
        requeue: bool = False,
        durable: Durable = False,
        **options: Unpack[PutOptions],
    ) -> str: ...
    @by_hand
    async def put_result(
        self,
        klass: JobClass,
        data: Any = None,
        *,
        durable: Durable = False,
        **options: Unpack[PutOptions],
    ) -> PutResult: ...
    @by_hand
    async def put_many(
        self, requests: Iterable[PutRequest], *, batch: int = 1000, durable: Durable = False
    ) -> list[str]: ...
    @by_hand
    async def put_many_results(
        self, requests: Iterable[PutRequest], *, batch: int = 1000, durable: Durable = False
    ) -> list[PutResult]: ...
    async def recur(
        self,
        klass: JobClass,
        data: Any = None,
        interval: float | None = None,
        *,
        name: str | None = None,
        jid: str | None = None,
        offset: float = 0,
        priority: float | None = None,
        tags: Sequence[str] | None = None,
        retries: int | None = None,
        backlog: int | None = None,
        throttles: Sequence[str] | None = None,
        cron: str | None = None,
        tz: str = "UTC",
    ) -> str: ...
    async def pop(self, *, worker: str | None = None) -> Job | None: ...
    async def pop_many(self, count: int, *, worker: str | None = None) -> Sequence[Job]: ...
    async def peek(self, count: int = 1, *, offset: int = 0) -> Sequence[Job]: ...
    @on_shards(every)
    async def pause(self, *, stopjobs: bool = False) -> list[str]: ...
    @on_shards(every)
    @script("queue.unpause", "self.name")
    async def unpause(self) -> None:
        """Hand out jobs again after `pause`.

        Examples:
            ```python
            await client.queues["emails"].unpause()
            ```
        """

    @on_shards(every)
    @script("queue.length", "self.name", reply=int)
    async def length(self) -> int:
        """Waiting, scheduled and running jobs.

        Examples:
            ```python
            backlog = await client.queues["emails"].length()
            ```
        """

    @on_shards(every, lambda waits, arguments: max(waits))
    @script("queue.latency", "self.name", reply=int)
    async def latency(self) -> int:
        """Whole seconds the job first in line (the one a pop takes next) has waited since it
        was last put; 0 when none waits. On a sharded deployment, the longest wait over the
        queue's shards. Sidekiq's ``Queue#latency``; alert on it, or scale workers by it.

        ```python
        if await client.queues["emails"].latency() > 60:
            alert("emails are a minute behind")
        ```
        """

    @on_shards(every)
    @script("queue.counts", "self.name", reply=QueueCounts.from_json)
    async def counts(self) -> QueueCounts:
        """How many jobs this queue holds in each state.

        Examples:
            ```python
            counts = await client.queues["emails"].counts()
            print(counts.waiting, counts.running, counts.stalled)
            ```
        """

    @on_shards(every)
    async def stats(self, date: datetime.date | float | None = None) -> QueueStats: ...
    async def scaling(
        self, target_p95: float, *, previous: QueueScaling | None = None
    ) -> QueueScaling: ...
    @on_shards(paged("listing"), page)
    async def jobs(
        self, state: JobState | str, *, offset: int = 0, count: int = 25
    ) -> list[str]: ...
    @on_shards(first)
    async def heartbeat(self) -> float: ...
    @on_shards(every)
    async def set_heartbeat(self, seconds: float | None) -> None: ...
    @on_shards(home)
    @script("queue.throttle.get", "self.name", reply=ThrottleInfo.from_json)
    async def throttle(self) -> ThrottleInfo:
        """This queue's own throttle: how many of its jobs may run at once.

        Examples:
            ```python
            info = await client.queues["emails"].throttle()
            ```
        """

    @script("queue.throttle.set", "self.name", "maximum")
    async def set_throttle(self, maximum: int) -> None:
        """Let at most `maximum` of this queue's jobs run at once (0: unlimited). A sharded
        deployment pins the queue to one shard first (`ShardedClient.pin`), so that the
        maximum holds over it.

        Args:
            maximum: jobs running at once at most, a whole number from 0.

        Raises:
            InvalidValueError: a `maximum` that is not a whole number from 0; nothing sent.

        Examples:
            ```python
            await client.queues["emails"].set_throttle(20)
            ```
        """

    async def set_rate_limit(
        self, limit: int | None, *, per: float = 1.0, smooth: bool = False
    ) -> None: ...
    async def unfail(self, group: str, count: int = 25) -> int: ...
    @on_shards(every)
    @script("queue.forget", "self.name")
    async def forget(self) -> None:
        """Drop this queue from the list of queues (its jobs stay).

        Examples:
            ```python
            await client.queues["old-emails"].forget()
            ```
        """

    async def groups(self) -> list[GroupCounts]: ...
    @on_shards(of_group)
    async def set_group_weight(self, group: str | None, weight: float) -> None: ...
    @on_shards(of_group)
    async def set_group_concurrency(self, group: str | None, maximum: int) -> None: ...
    @on_shards(of_group)
    async def set_group_rate_limit(
        self, group: str | None, limit: int | None, *, per: float = 1.0
    ) -> None: ...


class Queues(Protocol):
    """``queues["emails"]`` (no I/O), and every queue's names and counts.

    Examples:
        ```python
        emails = client.queues["emails"]
        names = await client.queues.names()
        ```
    """

    def __getitem__(self, name: str) -> Queue: ...
    @on_shards(every)
    @script("queues.names", reply=listed)
    async def names(self) -> list[str]:
        """The names of the queues the server knows.

        Examples:
            ```python
            names = await client.queues.names()
            ```
        """

    @on_shards(every)
    async def counts(self) -> list[QueueCounts]: ...
    async def scaling(
        self, target_p95: float, *, previous: Sequence[QueueScaling] = ()
    ) -> list[QueueScaling]: ...


class Jobs(Protocol):
    """Jobs by id, tag, tracking, completion and failure."""

    async def get(self, jid: str) -> Job | RecurringJob | None: ...
    async def get_many(self, jids: Sequence[str]) -> Sequence[Job]: ...
    @on_shards(by_jid())
    async def stored_result(self, jid: str) -> JobResult | None: ...
    @on_shards(by_jids)
    async def progress(self, *jids: str) -> dict[str, Progress]: ...
    @on_shards(by_jids)
    async def checkpoints(self, *jids: str) -> dict[str, Any]: ...
    @on_shards(paged("listing"), page)
    async def tagged(self, tag: str, *, offset: int = 0, count: int = 25) -> Page: ...
    async def tracked(self) -> tuple[Sequence[Job], list[str]]: ...
    @on_shards(paged("listing"), page)
    @script("jobs.completed", "offset", "count", reply=listed)
    async def completed(self, *, offset: int = 0, count: int = 25) -> list[str]:
        """Completed jids, most recent first: `count` of them after the first `offset`.

        Raises:
            InvalidValueError: `offset` is not a whole number from 0, or `count` one from 1;
                nothing read.

        Examples:
            ```python
            latest = await client.jobs.completed(count=10)  # the ten most recent
            ```
        """

    @on_shards(paged("listing"), page)
    async def failed(self, group: str, *, offset: int = 0, count: int = 25) -> Page: ...
    @on_shards(every)
    async def failure_groups(self) -> dict[str, int]: ...
    #: jobs that depend on each other, and a flow's, are on one shard: cancelled together
    @on_shards(by_jids)
    async def cancel(self, *jids: str) -> list[str]: ...


class Batches(Protocol):
    """N jobs tracked as one, with callback jobs when they end (aqless.batches)."""

    async def put(
        self,
        members: Iterable[BatchMember],
        *,
        on_success: BatchCallback | None = None,
        on_complete: BatchCallback | None = None,
        on_death: BatchCallback | None = None,
        description: str = "",
        ttl: float = DEFAULT_TTL,
        bid: str | None = None,
    ) -> str: ...
    async def get(self, bid: str) -> Batch | None: ...
    async def recent(self, *, offset: int = 0, count: int = 25) -> BatchPage: ...


class Flows(Protocol):
    """Trees of jobs put in one atomic call: a parent runs after its children and reads
    their results (aqless.flows)."""

    async def put(self, parent: FlowNode, children: Sequence[FlowNode] = ()) -> Flow: ...
    async def chain(self, steps: Sequence[FlowNode]) -> Flow: ...
    async def tree(self, jid: str) -> FlowTree | None: ...


class Config(Protocol):
    """The deployment's settings (``heartbeat``, ``jobs-history``...)."""

    @on_shards(first)
    async def get(self, option: str) -> str | None: ...
    @on_shards(every)
    async def set(self, option: str, value: str | float, *, force: bool = False) -> None: ...
    @on_shards(every)
    @script("config.unset", "option")
    async def unset(self, option: str) -> None:
        """Remove an option: back to its default (an option without one is then gone).

        Args:
            option: the option's name.

        Examples:
            ```python
            await client.config.unset("heartbeat")
            ```
        """

    @on_shards(first)
    async def all(self) -> dict[str, str]: ...


class Workers(Protocol):
    """The workers the server has seen.

    Examples:
        ```python
        counts = await client.workers.counts()
        ```
    """

    @on_shards(every, latest_first)
    async def counts(self) -> list[WorkerCounts]: ...
    @on_shards(every)
    async def jobs(self, worker: str) -> WorkerJobs: ...
    @on_shards(every)
    async def forget(self, *workers: str) -> None: ...
    @on_shards(every)
    async def records(self) -> dict[str, WorkerInfo]: ...
    @on_shards(every)
    async def control(self, worker: str, command: str) -> None:
        """Ask a running aqless worker to quiet, stop or resume (`aqless.Workers.control`);
        on a sharded deployment, asked on every shard.

        Raises:
            InvalidValueError: `worker` is no worker's name, or `command` is not one of
                quiet, stop, resume; nothing is written.

        Examples:
            ```python
            await client.workers.control("host-1-4242", "stop")
            ```
        """

    async def seen(self) -> SeenWorkers: ...


class Tags(Protocol):
    """The tags in use, most used first.

    Examples:
        ```python
        popular = await client.tags.top(count=10)
        ```
    """

    @script("tags.top", "offset", "count", reply=listed)
    async def top(self, *, offset: int = 0, count: int = 25) -> list[str]:
        """Tags carried by at least two jobs, most used first: `count` of them after the
        first `offset`.

        Args:
            offset: how many to skip first (default 0).
            count: how many at most (default 25).

        Raises:
            InvalidValueError: `offset` is not a whole number from 0, or `count` one from 1;
                nothing read.

        Examples:
            ```python
            for tag in await client.tags.top(count=10):
                print(tag)
            ```
        """


class QueuePatterns(Protocol):
    """Queue identifiers (``@name`` stands for queues) and priority patterns."""

    @on_shards(first)
    async def identifiers(self) -> dict[str, list[str]]: ...
    @on_shards(every)
    async def set_identifiers(self, identifiers: Mapping[str, Sequence[str]]) -> None: ...
    @on_shards(first)
    async def priorities(self) -> list[PriorityPattern]: ...
    @on_shards(every)
    async def set_priorities(self, groups: Sequence[PriorityPattern]) -> None: ...


class EventStream(Protocol):
    """A subscription to the server's events: ``async with`` it, then ``async for``."""

    @property
    def channels(self) -> tuple[str, ...]: ...

    async def __aenter__(self) -> Self: ...
    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None: ...
    def __aiter__(self) -> Self: ...
    async def __anext__(self) -> Event: ...
    async def aclose(self) -> None: ...


class Client(Protocol):
    """A client of one deployment: plain (``aqless.Client``) or sharded
    (``aqless.ShardedClient``)."""

    @property
    def queues(self) -> Queues: ...
    @property
    def jobs(self) -> Jobs: ...
    @property
    def batches(self) -> Batches: ...
    @property
    def flows(self) -> Flows: ...
    @property
    def config(self) -> Config: ...
    @property
    def workers(self) -> Workers: ...
    @property
    def throttles(self) -> Throttles: ...
    @property
    def rate_limits(self) -> RateLimits: ...
    @property
    def tags(self) -> Tags: ...
    @property
    def queue_patterns(self) -> QueuePatterns: ...
    @property
    def worker_name(self) -> str: ...
    @property
    def sharded(self) -> bool:
        """Whether the deployment is sharded (over the shards of `servers`)."""
        ...

    @property
    def servers(self) -> Sequence[ScriptClient]:
        """The plain client of each of the deployment's servers: the client itself for one
        server, one per shard (active or draining, by shard id) for a sharded deployment."""
        ...

    async def open(self) -> Self: ...
    async def aclose(self) -> None: ...
    async def __aenter__(self) -> Self: ...
    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None: ...
    def events(self, *channels: str, workers: Sequence[str] = ()) -> EventStream: ...
    @on_shards(by_jid())
    async def wait(self, jid: str, *, timeout: float | None = None) -> JobState | None: ...
    @on_shards(by_jid())
    async def result(self, jid: str, *, timeout: float | None = None) -> Any: ...
    @on_shards(by_jid())
    async def signal(
        self, jid: str, signal: str, payload: Any = None, *, signal_id: str | None = None
    ) -> Delivery:
        """Send `signal` with `payload` (JSON) to the workflow `jid`: ``"woken"``, ``"kept"``
        or ``"duplicate"``. A sharded client sends it to the shard that holds the job. Its
        parameters, replies and errors are `aqless.Client.signal`'s.

        Examples:
            ```python
            async def approve(client: contracts.Client, jid: str) -> None:
                await client.signal(jid, "approval", {"by": "mia"}, signal_id=f"ok-{jid}")
            ```
        """


class ScriptClient(Client, Protocol):
    """A client of one server (or of one shard): the contract's surface, and what its own
    parts (queues, jobs, limits, schedules, results) call on it: the script, the clock and
    the names it works under. ``aqless.Client`` is one; they take it as this contract, so
    that none of them imports the Client."""

    @property
    def protocol(self) -> ScriptCaller: ...
    @property
    def clock(self) -> Clock: ...
    @property
    def prefix(self) -> str: ...
    @property
    def namespace(self) -> str | None: ...
    @property
    def redis(self) -> AnyRedis: ...
    @property
    def put_hooks(self) -> Sequence[Callable[..., Awaitable[list[str]]]]: ...
    @property
    def codec(self) -> PayloadCodec | None: ...
