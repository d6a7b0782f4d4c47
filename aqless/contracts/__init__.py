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
    Overlap,
    Page,
    QueueCounts,
    QueueStats,
    RecurringChanges,
    SeenWorkers,
    ThrottleInfo,
    When,
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
    them (see aqless.Job); reading them does no I/O.

    Examples:
        ```python
        print(job.jid, job.queue_name, job.state, job.retries_left)
        ```
    """

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
    checkpoint, progress) and those of anyone (cancel, move, tag, track, wait...).

    Examples:
        ```python
        async def finish(job: contracts.Job) -> None:
            await job.complete(result={"ok": True})
        ```
    """

    async def complete(
        self,
        next_queue: str | None = None,
        *,
        delay: float | None = None,
        depends: Sequence[str] | None = None,
        result: Any = None,
    ) -> JobState:
        """Finish the job, keeping `result`, or move it on to `next_queue`. Parameters and errors:
        `aqless.Job.complete`.

        Examples:
            ```python
            await job.complete(result={"sent": True})
            ```
        """

    async def fail(self, group: str, message: str) -> None:
        """Fail the job into `group` with `message`. Parameters and errors: `aqless.Job.fail`.

        Examples:
            ```python
            await job.fail("smtp-down", "connection refused")
            ```
        """

    async def retry(
        self, delay: float = 0, group: str | None = None, message: str | None = None
    ) -> int:
        """Give the job back to its queue after `delay` seconds, spending one retry. Parameters and
        errors: `aqless.Job.retry`.

        Examples:
            ```python
            left = await job.retry(delay=30)
            ```
        """

    async def heartbeat(self) -> float:
        """Renew the job's lock; returns when it expires now (epoch seconds). Parameters and errors:
        `aqless.Job.heartbeat`.

        Examples:
            ```python
            expires_at = await job.heartbeat()
            ```
        """

    async def checkpoint(self, state: Any) -> float:
        """Store `state` for the next attempt to resume from, and renew the lock. Parameters and
        errors: `aqless.Job.checkpoint`.

        Examples:
            ```python
            await job.checkpoint({"row": 5000})
            ```
        """

    async def progress(self, fraction: float, message: str = "") -> None:
        """Report how far the job got: `fraction` from 0 to 1, and a message. Parameters and errors:
        `aqless.Job.progress`.

        Examples:
            ```python
            await job.progress(0.5, "half the rows")
            ```
        """

    async def hand_back(self, reason: str) -> None:
        """Give the job back to its queue at once, spending no retry. Parameters and errors:
        `aqless.Job.hand_back`.

        Examples:
            ```python
            await job.hand_back("worker stopping")
            ```
        """

    async def timeout(self) -> None:
        """Take the job from its worker now, as if its lock had expired. Parameters and errors:
        `aqless.Job.timeout`.

        Examples:
            ```python
            await job.timeout()
            ```
        """

    async def cancel(self) -> None:
        """Delete the job (a flow's job takes the jobs below it along). Parameters and errors:
        `aqless.Job.cancel`.

        Examples:
            ```python
            await job.cancel()
            ```
        """

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
    ) -> None:
        """Put the job into `queue` again, keeping its data. Parameters and errors:
        `aqless.Job.move`.

        Examples:
            ```python
            await job.move("emails-slow", delay=60)
            ```
        """

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
    ) -> None:
        """Put the job into `queue` again, keeping its data (`move`'s other name). Parameters and
        errors: `aqless.Job.requeue`.

        Examples:
            ```python
            await job.requeue("emails", priority=10)
            ```
        """

    async def tag(self, *tags: str) -> tuple[str, ...]:
        """Add tags; returns all of the job's tags. Parameters and errors: `aqless.Job.tag`.

        Examples:
            ```python
            tags = await job.tag("vip")
            ```
        """

    async def untag(self, *tags: str) -> tuple[str, ...]:
        """Remove tags; returns the tags left. Parameters and errors: `aqless.Job.untag`.

        Examples:
            ```python
            tags = await job.untag("vip")
            ```
        """

    async def track(self) -> bool:
        """Send the job's events to the tracking channels too; False if it already was. Parameters
        and errors: `aqless.Job.track`.

        Examples:
            ```python
            await job.track()
            ```
        """

    async def untrack(self) -> bool:
        """Stop tracking the job; False if it was not tracked. Parameters and errors:
        `aqless.Job.untrack`.

        Examples:
            ```python
            await job.untrack()
            ```
        """

    async def set_priority(self, priority: float) -> None:
        """Change the job's priority (higher runs earlier). Parameters and errors:
        `aqless.Job.set_priority`.

        Examples:
            ```python
            await job.set_priority(10)
            ```
        """

    async def depend(self, *jids: str) -> None:
        """Wait for more jobs too (a job in the depends state). Parameters and errors:
        `aqless.Job.depend`.

        Examples:
            ```python
            await job.depend(other_jid)
            ```
        """

    async def undepend(self, *jids: str, all: bool = False) -> None:
        """Stop waiting for some jobs, or for all of them. Parameters and errors:
        `aqless.Job.undepend`.

        Examples:
            ```python
            await job.undepend(all=True)
            ```
        """

    async def log(self, /, message: str, **data: Any) -> None:
        """Add `message`, with `data` as its details, to the job's history. Parameters and errors:
        `aqless.Job.log`.

        Examples:
            ```python
            await job.log("sent", attempt=2)
            ```
        """

    async def wait(self, timeout: float | None = None) -> JobState | None:
        """Wait until the job completes or fails; None if it was cancelled. Parameters and errors:
        `aqless.Job.wait`.

        Examples:
            ```python
            state = await job.wait(timeout=30)
            ```
        """

    async def result(self, timeout: float | None = None) -> Any:
        """Wait until the job finishes; its handler's return value. Parameters and errors:
        `aqless.Job.result`.

        Examples:
            ```python
            value = await job.result(timeout=30)
            ```
        """

    async def children_results(self) -> ChildrenResults:
        """A flow parent's children, each with its state and result. Parameters and errors:
        `aqless.Job.children_results`.

        Examples:
            ```python
            results = await job.children_results()
            ```
        """

    async def refresh(self) -> Job:
        """A new handle on the job, as the server holds it now. Parameters and errors:
        `aqless.Job.refresh`.

        Examples:
            ```python
            job = await job.refresh()
            ```
        """


class RecurringJob(Protocol):
    """A recurring job's template and its verbs.

    Examples:
        ```python
        recurring = await client.jobs.get(rid)
        print(recurring.interval, recurring.cron)
        ```
    """

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
    @property
    def overlap(self) -> Overlap: ...
    @property
    def catchup(self) -> float: ...
    @property
    def pause_after(self) -> int: ...
    @property
    def jitter(self) -> float: ...
    @property
    def paused(self) -> bool: ...
    @property
    def failures(self) -> int: ...
    @property
    def buffered(self) -> int: ...

    async def next_runs(self, count: int = 5) -> list[datetime.datetime]:
        """When it spawns next: the next `count` times (default 5). Parameters and errors:
        `aqless.RecurringJob.next_runs`.

        Examples:
            ```python
            for when in await recurring.next_runs(3):
                print(when.isoformat())
            ```
        """

    async def update(self, **changes: Unpack[RecurringChanges]) -> None:
        """Change the template; the jobs it spawns from now on follow. Parameters and errors:
        `aqless.RecurringJob.update`.

        Examples:
            ```python
            await recurring.update(interval=300, priority=5)
            ```
        """

    async def backfill(self, start: When, end: When) -> int:
        """Make the runs due from `start` up to `end` (the past), each time once however
        often it is backfilled; returns how many it made.

        Raises:
            InvalidValueError: `start` or `end` outside its rule; nothing sent.
            ConfigurationError: `end` not after `start`, after now, or too long a range.
            JobNotFoundError: the template is gone.

        Examples:
            ```python
            made = await recurring.backfill(yesterday, today)
            ```
        """

    async def pause(self) -> None:
        """Stop making runs until `resume`.

        Raises:
            AqlessError: the server could not be reached, or refused.

        Examples:
            ```python
            await recurring.pause()
            ```
        """

    async def resume(self) -> None:
        """Make runs again after `pause` or after `pause_after` failures in a row.

        Raises:
            AqlessError: the server could not be reached, or refused.

        Examples:
            ```python
            await recurring.resume()
            ```
        """

    async def tag(self, *tags: str) -> tuple[str, ...]:
        """Add tags for the jobs it spawns from now on; returns all of them. Parameters and errors:
        `aqless.RecurringJob.tag`.

        Examples:
            ```python
            await recurring.tag("nightly")
            ```
        """

    async def untag(self, *tags: str) -> tuple[str, ...]:
        """Remove tags; returns the tags left. Parameters and errors: `aqless.RecurringJob.untag`.

        Examples:
            ```python
            await recurring.untag("nightly")
            ```
        """

    async def cancel(self) -> None:
        """Stop spawning (jobs spawned already stay). Parameters and errors:
        `aqless.RecurringJob.cancel`.

        Examples:
            ```python
            await recurring.cancel()
            ```
        """


class RateLimit(Protocol):
    """One limiter: at most `limit` job starts in any `per` seconds.

    Examples:
        ```python
        await client.rate_limits["partner-api"].set(10, per=60)
        ```
    """

    @property
    def id(self) -> str: ...

    async def get(self) -> RateLimitInfo:
        """Its limit, the starts in the current window and the wait for the next. Parameters and
        errors: `aqless.RateLimit.get`.

        Examples:
            ```python
            info = await client.rate_limits["partner-api"].get()
            ```
        """

    async def set(self, limit: int, *, per: float = 1.0, smooth: bool = False) -> None:
        """Start at most `limit` jobs in any `per` seconds (default 1.0). Parameters and errors:
        `aqless.RateLimit.set`.

        Examples:
            ```python
            await client.rate_limits["partner-api"].set(10, per=60)
            ```
        """

    async def delete(self) -> None:
        """Lift the limit. Parameters and errors: `aqless.RateLimit.delete`.

        Examples:
            ```python
            await client.rate_limits["partner-api"].delete()
            ```
        """


class RateLimits(Protocol):
    """``rate_limits["api"]`` (no I/O), a queue's own limiter, and every limit set.

    Examples:
        ```python
        partner = client.rate_limits["partner-api"]
        ```
    """

    def __getitem__(self, name: str) -> RateLimit: ...
    def of_queue(self, queue: str) -> RateLimit:
        """A queue's own limiter (no I/O). Parameters and errors: `aqless.RateLimits.of_queue`.

        Examples:
            ```python
            limiter = client.rate_limits.of_queue("emails")
            ```
        """

    async def all(self) -> list[RateLimitInfo]:
        """Every limit set, queues' and named ones. Parameters and errors: `aqless.RateLimits.all`.

        Examples:
            ```python
            for info in await client.rate_limits.all():
                print(info.id, info.limit)
            ```
        """


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
    ) -> str:
        """Put a job into this queue; returns its jid. Parameters and errors: `aqless.Queue.put`.

        Examples:
            ```python
            jid = await queue.put("app.jobs.SendEmail", {"to": "ada@example.com"})
            ```
        """

    @by_hand
    async def put_result(
        self,
        klass: JobClass,
        data: Any = None,
        *,
        durable: Durable = False,
        **options: Unpack[PutOptions],
    ) -> PutResult:
        """`put`, telling what it did (new, deduplicated or debounced). Parameters and errors:
        `aqless.Queue.put_result`.

        Examples:
            ```python
            result = await queue.put_result("app.jobs.Sync", {}, dedup="sync-42")
            ```
        """

    @by_hand
    async def put_many(
        self, requests: Iterable[PutRequest], *, batch: int = 1000, durable: Durable = False
    ) -> list[str]:
        """Put many jobs, one round trip per `batch` (default 1000); their jids. Parameters and
        errors: `aqless.Queue.put_many`.

        Examples:
            ```python
            requests = [aqless.PutRequest("app.jobs.Thumb", {"id": i}) for i in range(100)]
            jids = await queue.put_many(requests)
            ```
        """

    @by_hand
    async def put_many_results(
        self, requests: Iterable[PutRequest], *, batch: int = 1000, durable: Durable = False
    ) -> list[PutResult]:
        """`put_many`, telling what each put did. Parameters and errors:
        `aqless.Queue.put_many_results`.

        Examples:
            ```python
            requests = [aqless.PutRequest("app.jobs.Thumb", {"id": 1})]
            results = await queue.put_many_results(requests)
            ```
        """

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
        overlap: Overlap | None = None,
        catchup: float | None = None,
        pause_after: int | None = None,
        jitter: float | None = None,
    ) -> str:
        """Spawn a job every `interval` seconds, or at a `cron` expression's times. Parameters and
        errors: `aqless.Queue.recur`.

        Examples:
            ```python
            rid = await queue.recur("app.jobs.Report", {}, interval=3600)
            ```
        """

    async def pop(self, *, worker: str | None = None) -> Job | None:
        """Take the next job, or None when there is none. Parameters and errors: `aqless.Queue.pop`.

        Examples:
            ```python
            job = await queue.pop()
            ```
        """

    async def pop_many(self, count: int, *, worker: str | None = None) -> Sequence[Job]:
        """Take up to `count` jobs, locked for this worker. Parameters and errors:
        `aqless.Queue.pop_many`.

        Examples:
            ```python
            jobs = await queue.pop_many(10)
            ```
        """

    async def peek(self, count: int = 1, *, offset: int = 0) -> Sequence[Job]:
        """The jobs a pop would take next, without taking them. Parameters and errors:
        `aqless.Queue.peek`.

        Examples:
            ```python
            upcoming = await queue.peek(5)
            ```
        """

    @on_shards(every)
    async def pause(self, *, stopjobs: bool = False) -> list[str]:
        """Stop handing out jobs (put and peek still work). Parameters and errors:
        `aqless.Queue.pause`.

        Examples:
            ```python
            await queue.pause()
            ```
        """

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
    async def stats(self, date: datetime.date | float | None = None) -> QueueStats:
        """Wait and run times and failure counts for a day (default today). Parameters and errors:
        `aqless.Queue.stats`.

        Examples:
            ```python
            today = await queue.stats()
            ```
        """

    async def scaling(
        self, target_p95: float, *, previous: QueueScaling | None = None
    ) -> QueueScaling:
        """This queue's scaling signals: the worker slots that keep its p95 wait under
        `target_p95` seconds, and what they are read from. Parameters and errors:
        `aqless.Queue.scaling`.

        Examples:
            ```python
            signals = await queue.scaling(target_p95=30)
            ```
        """

    @on_shards(paged("listing"), page)
    async def jobs(self, state: JobState | str, *, offset: int = 0, count: int = 25) -> list[str]:
        """Jids in a state, a page of `count` (default 25) after `offset`. Parameters and errors:
        `aqless.Queue.jobs`.

        Examples:
            ```python
            running = await queue.jobs("running")
            ```
        """

    @on_shards(first)
    async def heartbeat(self) -> float:
        """Seconds a lock lasts in this queue. Parameters and errors: `aqless.Queue.heartbeat`.

        Examples:
            ```python
            seconds = await queue.heartbeat()
            ```
        """

    @on_shards(every)
    async def set_heartbeat(self, seconds: float | None) -> None:
        """Set this queue's lock duration in seconds; None goes back to the global one. Parameters
        and errors: `aqless.Queue.set_heartbeat`.

        Examples:
            ```python
            await queue.set_heartbeat(120)
            ```
        """

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
    ) -> None:
        """Start at most `limit` of this queue's jobs in any `per` seconds; None lifts it.
        Parameters and errors: `aqless.Queue.set_rate_limit`.

        Examples:
            ```python
            await queue.set_rate_limit(100, per=60)
            ```
        """

    async def unfail(self, group: str, count: int = 25) -> int:
        """Move the oldest `count` (default 25) failed jobs of `group` into this queue; how many.
        Parameters and errors: `aqless.Queue.unfail`.

        Examples:
            ```python
            moved = await queue.unfail("smtp-down")
            ```
        """

    @on_shards(every)
    @script("queue.forget", "self.name")
    async def forget(self) -> None:
        """Drop this queue from the list of queues (its jobs stay).

        Examples:
            ```python
            await client.queues["old-emails"].forget()
            ```
        """

    async def groups(self) -> list[GroupCounts]:
        """This queue's fairness groups, each with its counts, weight and cap. Parameters and
        errors: `aqless.Queue.groups`.

        Examples:
            ```python
            for group in await queue.groups():
                print(group.name, group.waiting)
            ```
        """

    @on_shards(of_group)
    async def set_group_weight(self, group: str | None, weight: float) -> None:
        """Give `group` `weight` turns of the pops for each turn of a weight-1 group. Parameters and
        errors: `aqless.Queue.set_group_weight`.

        Examples:
            ```python
            await queue.set_group_weight("tenant-7", 3)
            ```
        """

    @on_shards(of_group)
    async def set_group_concurrency(self, group: str | None, maximum: int) -> None:
        """Run at most `maximum` jobs of `group` at once; 0 lifts the cap. Parameters and errors:
        `aqless.Queue.set_group_concurrency`.

        Examples:
            ```python
            await queue.set_group_concurrency("tenant-7", 2)
            ```
        """

    @on_shards(of_group)
    async def set_group_rate_limit(
        self, group: str | None, limit: int | None, *, per: float = 1.0
    ) -> None:
        """Start at most `limit` jobs of `group` in any `per` seconds; None lifts it. Parameters and
        errors: `aqless.Queue.set_group_rate_limit`.

        Examples:
            ```python
            await queue.set_group_rate_limit("tenant-7", 10, per=60)
            ```
        """


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
    async def counts(self) -> list[QueueCounts]:
        """Every queue's counts by state. Parameters and errors: `aqless.Queues.counts`.

        Examples:
            ```python
            for counts in await client.queues.counts():
                print(counts.name, counts.waiting)
            ```
        """

    async def scaling(
        self, target_p95: float, *, previous: Sequence[QueueScaling] = ()
    ) -> list[QueueScaling]:
        """Every queue's `Queue.scaling`. Parameters and errors: `aqless.Queues.scaling`.

        Examples:
            ```python
            signals = await client.queues.scaling(target_p95=30)
            ```
        """


class Jobs(Protocol):
    """Jobs by id, tag, tracking, completion and failure.

    Examples:
        ```python
        job = await client.jobs.get(jid)
        ```
    """

    async def get(self, jid: str) -> Job | RecurringJob | None:
        """The job or recurring job with this id, or None. Parameters and errors: `aqless.Jobs.get`.

        Examples:
            ```python
            job = await client.jobs.get(jid)
            ```
        """

    async def get_many(self, jids: Sequence[str]) -> Sequence[Job]:
        """The jobs that exist among `jids`, in order, read in one call. Parameters and errors:
        `aqless.Jobs.get_many`.

        Examples:
            ```python
            jobs = await client.jobs.get_many([first, second])
            ```
        """

    @on_shards(by_jid())
    async def stored_result(self, jid: str) -> JobResult | None:
        """The job's kept return value and state now, without waiting. Parameters and errors:
        `aqless.Jobs.stored_result`.

        Examples:
            ```python
            kept = await client.jobs.stored_result(jid)
            ```
        """

    @on_shards(by_jids)
    async def progress(self, *jids: str) -> dict[str, Progress]:
        """The last progress report of each job among `jids`, by jid. Parameters and errors:
        `aqless.Jobs.progress`.

        Examples:
            ```python
            reports = await client.jobs.progress(jid)
            ```
        """

    @on_shards(by_jids)
    async def checkpoints(self, *jids: str) -> dict[str, Any]:
        """The last checkpoint state of each job among `jids`, by jid. Parameters and errors:
        `aqless.Jobs.checkpoints`.

        Examples:
            ```python
            states = await client.jobs.checkpoints(jid)
            ```
        """

    @on_shards(paged("listing"), page)
    async def tagged(self, tag: str, *, offset: int = 0, count: int = 25) -> Page:
        """The jids tagged `tag`, a page at a time, with the total. Parameters and errors:
        `aqless.Jobs.tagged`.

        Examples:
            ```python
            page = await client.jobs.tagged("vip")
            ```
        """

    async def tracked(self) -> tuple[Sequence[Job], list[str]]:
        """The tracked jobs, and the tracked jids whose jobs are gone. Parameters and errors:
        `aqless.Jobs.tracked`.

        Examples:
            ```python
            jobs, gone = await client.jobs.tracked()
            ```
        """

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
    async def failed(self, group: str, *, offset: int = 0, count: int = 25) -> Page:
        """The jids failed in `group`, most recent first, a page at a time. Parameters and errors:
        `aqless.Jobs.failed`.

        Examples:
            ```python
            page = await client.jobs.failed("smtp-down")
            ```
        """

    @on_shards(every)
    async def failure_groups(self) -> dict[str, int]:
        """Every failure group with its number of failed jobs. Parameters and errors:
        `aqless.Jobs.failure_groups`.

        Examples:
            ```python
            groups = await client.jobs.failure_groups()
            ```
        """

    #: jobs that depend on each other, and a flow's, are on one shard: cancelled together
    @on_shards(by_jids)
    async def cancel(self, *jids: str) -> list[str]:
        """Cancel several jobs in one call; the jids cancelled. Parameters and errors:
        `aqless.Jobs.cancel`.

        Examples:
            ```python
            await client.jobs.cancel(first, second)
            ```
        """


class Batches(Protocol):
    """N jobs tracked as one, with callback jobs when they end (aqless.batches).

    Examples:
        ```python
        batch = await client.batches.get(bid)
        ```
    """

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
    ) -> str:
        """Put the members as one batch, in one atomic call; the batch's id. Parameters and errors:
        `aqless.Batches.put`.

        Examples:
            ```python
            thumb = aqless.PutRequest("app.jobs.Thumb", {"id": 1})
            bid = await client.batches.put([("thumbs", thumb)])
            ```
        """

    async def get(self, bid: str) -> Batch | None:
        """The batch's record and live totals; None when there is none. Parameters and errors:
        `aqless.Batches.get`.

        Examples:
            ```python
            batch = await client.batches.get(bid)
            ```
        """

    async def recent(self, *, offset: int = 0, count: int = 25) -> BatchPage:
        """The batches kept, newest first, a page at a time. Parameters and errors:
        `aqless.Batches.recent`.

        Examples:
            ```python
            page = await client.batches.recent(count=10)
            ```
        """


class Flows(Protocol):
    """Trees of jobs put in one atomic call: a parent runs after its children and reads
    their results (aqless.flows).

    Examples:
        ```python
        tree = await client.flows.tree(jid)
        ```
    """

    async def put(self, parent: FlowNode, children: Sequence[FlowNode] = ()) -> Flow:
        """Put `parent` and its children in one atomic call. Parameters and errors:
        `aqless.flows.Flows.put`.

        Examples:
            ```python
            flow = await client.flows.put(report, [part_one, part_two])
            ```
        """

    async def chain(self, steps: Sequence[FlowNode]) -> Flow:
        """Put steps that run one after the other, in one atomic call. Parameters and errors:
        `aqless.flows.Flows.chain`.

        Examples:
            ```python
            flow = await client.flows.chain([fetch, resize, upload])
            ```
        """

    async def tree(self, jid: str) -> FlowTree | None:
        """The whole flow `jid` belongs to, each job with its state; None when there is no such job.
        Parameters and errors: `aqless.flows.Flows.tree`.

        Examples:
            ```python
            tree = await client.flows.tree(jid)
            ```
        """


class Config(Protocol):
    """The deployment's settings (``heartbeat``, ``jobs-history``...).

    Examples:
        ```python
        await client.config.set("heartbeat", 120)
        ```
    """

    @on_shards(first)
    async def get(self, option: str) -> str | None:
        """An option's value as text, or None for an unknown one. Parameters and errors:
        `aqless.Config.get`.

        Examples:
            ```python
            heartbeat = await client.config.get("heartbeat")
            ```
        """

    @on_shards(every)
    async def set(self, option: str, value: str | float, *, force: bool = False) -> None:
        """Set an option. Parameters and errors: `aqless.Config.set`.

        Examples:
            ```python
            await client.config.set("jobs-history", 7 * 86400)
            ```
        """

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
    async def all(self) -> dict[str, str]:
        """Every option, values as text. Parameters and errors: `aqless.Config.all`.

        Examples:
            ```python
            options = await client.config.all()
            ```
        """


class Workers(Protocol):
    """The workers the server has seen.

    Examples:
        ```python
        counts = await client.workers.counts()
        ```
    """

    @on_shards(every, latest_first)
    async def counts(self) -> list[WorkerCounts]:
        """Every worker, most recently active first, with the jobs it holds. Parameters and errors:
        `aqless.Workers.counts`.

        Examples:
            ```python
            counts = await client.workers.counts()
            ```
        """

    @on_shards(every)
    async def jobs(self, worker: str) -> WorkerJobs:
        """The jids one worker holds, running and stalled apart. Parameters and errors:
        `aqless.Workers.jobs`.

        Examples:
            ```python
            held = await client.workers.jobs("host-1-4242")
            ```
        """

    @on_shards(every)
    async def forget(self, *workers: str) -> None:
        """Drop workers from the list (their jobs are not touched). Parameters and errors:
        `aqless.Workers.forget`.

        Examples:
            ```python
            await client.workers.forget("host-1-4242")
            ```
        """

    @on_shards(every)
    async def records(self) -> dict[str, WorkerInfo]:
        """What each live aqless worker says of itself, by name. Parameters and errors:
        `aqless.Workers.records`.

        Examples:
            ```python
            for name, info in (await client.workers.records()).items():
                print(name, info.host)
            ```
        """

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

    async def seen(self) -> SeenWorkers:
        """The workers that hold jobs or publish a record. Parameters and errors:
        `aqless.Workers.seen`.

        Examples:
            ```python
            seen = await client.workers.seen()
            ```
        """


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
    """Queue identifiers (``@name`` stands for queues) and priority patterns.

    Examples:
        ```python
        print(await client.queue_patterns.identifiers())
        ```
    """

    @on_shards(first)
    async def identifiers(self) -> dict[str, list[str]]:
        """Each identifier's queue patterns. Parameters and errors:
        `aqless.QueuePatterns.identifiers`.

        Examples:
            ```python
            identifiers = await client.queue_patterns.identifiers()
            ```
        """

    @on_shards(every)
    async def set_identifiers(self, identifiers: Mapping[str, Sequence[str]]) -> None:
        """Replace every identifier: ``@name`` then stands for its patterns' queues. Parameters and
        errors: `aqless.QueuePatterns.set_identifiers`.

        Examples:
            ```python
            await client.queue_patterns.set_identifiers({"mail": ["emails", "sms"]})
            ```
        """

    @on_shards(first)
    async def priorities(self) -> list[PriorityPattern]:
        """The priority groups in order. Parameters and errors: `aqless.QueuePatterns.priorities`.

        Examples:
            ```python
            patterns = await client.queue_patterns.priorities()
            ```
        """

    @on_shards(every)
    async def set_priorities(self, groups: Sequence[PriorityPattern]) -> None:
        """Replace the priority order. Parameters and errors: `aqless.QueuePatterns.set_priorities`.

        Examples:
            ```python
            urgent = aqless.PriorityPattern(("urgent-*",))
            rest = aqless.PriorityPattern(("default",))
            await client.queue_patterns.set_priorities([urgent, rest])
            ```
        """


class EventStream(Protocol):
    """A subscription to the server's events: ``async with`` it, then ``async for``.

    Examples:
        ```python
        async with client.events("failed") as events:
            async for event in events:
                print(event.jid)
        ```
    """

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
    async def aclose(self) -> None:
        """Unsubscribe and close the connection; closing twice is harmless. Parameters and errors:
        `aqless.EventStream.aclose`.

        Examples:
            ```python
            await events.aclose()
            ```
        """


class Client(Protocol):
    """A client of one deployment: plain (``aqless.Client``) or sharded
    (``aqless.ShardedClient``).

    Examples:
        ```python
        async def backlog(client: contracts.Client) -> int:
            return await client.queues["emails"].length()
        ```
    """

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

    async def open(self) -> Self:
        """Connect and check the server; returns the client. Parameters and errors:
        `aqless.Client.open`.

        Examples:
            ```python
            client = await client.open()
            ```
        """

    async def aclose(self) -> None:
        """Release every connection; the client then refuses every call. Parameters and errors:
        `aqless.Client.aclose`.

        Examples:
            ```python
            await client.aclose()
            ```
        """

    async def __aenter__(self) -> Self: ...
    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None: ...
    def events(self, *channels: str, workers: Sequence[str] = ()) -> EventStream:
        """An async iterator of the server's events on `channels`. Parameters and errors:
        `aqless.Client.events`.

        Examples:
            ```python
            async with client.events("completed") as events:
                async for event in events:
                    print(event.jid)
            ```
        """

    @on_shards(by_jid())
    async def wait(self, jid: str, *, timeout: float | None = None) -> JobState | None:
        """Wait until job `jid` completes or fails; None if it was cancelled or is gone. Parameters
        and errors: `aqless.Client.wait`.

        Examples:
            ```python
            state = await client.wait(jid, timeout=30)
            ```
        """

    @on_shards(by_jid())
    async def result(self, jid: str, *, timeout: float | None = None) -> Any:
        """Wait until job `jid` finishes; its handler's return value. Parameters and errors:
        `aqless.Client.result`.

        Examples:
            ```python
            value = await client.result(jid, timeout=30)
            ```
        """

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
    that none of them imports the Client.

    Examples:
        ```python
        def namespaced(client: contracts.ScriptClient, key: str) -> str:
            return f"{client.prefix}{key}"
        ```
    """

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
