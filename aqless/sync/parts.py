"""The blocking façades of a client's parts (queues, jobs, settings, workers, limits...),
written once for plain and sharded clients. Each derives its verbs from its contract
(aqless/sync/derived.py, generated: ``python -m aqless.contracts --write``) and writes here only
what no contract verb gives: how it reaches its async object, and its own members.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from aqless import contracts
from aqless.batches import Batches
from aqless.client import Config, Jobs, Queues, Tags, Throttle, Workers
from aqless.flows.client import Flows
from aqless.limits import RateLimit, RateLimits, checked_limit_name
from aqless.patterns import QueuePatterns
from aqless.queue import Queue, checked_name
from aqless.sharding.queue import ShardedQueue
from aqless.sync.derived import (
    BatchesVerbs,
    ConfigVerbs,
    FlowsVerbs,
    JobsVerbs,
    QueuePatternsVerbs,
    QueuesVerbs,
    QueueVerbs,
    RateLimitsVerbs,
    RateLimitVerbs,
    TagsVerbs,
    ThrottleVerbs,
    WorkersVerbs,
)
from aqless.sync.facades import Facade, SyncJob, blocking

if TYPE_CHECKING:
    from aqless.sync.runtime import BlockingClient

# -- queues ---------------------------------------------------------------------------------


class QueuesFacade(QueuesVerbs):
    """Every queue's names and counts (summed over the shards of a sharded deployment)."""

    documented_by: ClassVar[type | None] = Queues

    def __init__(self, client: BlockingClient[Any]) -> None:
        super().__init__(client, lambda loop_client: loop_client.queues)


class SyncQueues(QueuesFacade):
    """``client.queues[name]`` (no I/O), and every queue's names and counts.

    Examples:
        ```python
        emails = client.queues["emails"]
        names = client.queues.names()
        ```
    """

    def __getitem__(self, name: str) -> SyncQueue:
        return SyncQueue(self._client, name)


class SyncShardedQueues(QueuesFacade):
    """``client.queues[name]`` of a sharded deployment (no I/O), and its queues' names and
    counts.

    Examples:
        ```python
        invoices = client.queues["invoices"]
        counts = client.queues.counts()  # summed over the shards
        ```
    """

    def __getitem__(self, name: str) -> SyncShardedQueue:
        return SyncShardedQueue(self._client, name)


class QueueFacade(QueueVerbs):
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


class SyncQueue(QueueFacade):
    """A named queue (``aqless.Queue``'s verbs, blocking).

    Examples:
        ```python
        emails = client.queues["emails"]
        jid = emails.put("app.jobs.SendEmail", {"to": "ada@example.com"})
        job = emails.pop()
        ```
    """

    put = blocking(contracts.Queue.put)
    put_result = blocking(contracts.Queue.put_result)
    put_many = blocking(contracts.Queue.put_many)
    put_many_results = blocking(contracts.Queue.put_many_results)


class SyncShardedQueue(QueueFacade):
    """A queue of a sharded deployment (``aqless.ShardedQueue``'s verbs, blocking): its puts
    take a `route`, a routing key whose jobs share one shard.

    Examples:
        ```python
        invoices = client.queues["invoices"]
        jid = invoices.put("billing.Invoice", {"id": 7}, route="customer-42")
        ```
    """

    documented_by: ClassVar[type | None] = ShardedQueue

    put = blocking(ShardedQueue.put)
    put_result = blocking(ShardedQueue.put_result)
    put_many = blocking(ShardedQueue.put_many)
    put_many_results = blocking(ShardedQueue.put_many_results)


# -- jobs -----------------------------------------------------------------------------------


class SyncJobs(JobsVerbs):
    """Jobs by id, tag, tracking, completion and failure (``aqless.Jobs``'s, blocking).

    Examples:
        ```python
        job = client.jobs.get(jid)
        ```
    """

    documented_by: ClassVar[type | None] = Jobs

    def __init__(self, client: BlockingClient[Any]) -> None:
        super().__init__(client, lambda loop_client: loop_client.jobs)

    def tracked(self) -> tuple[list[SyncJob], list[str]]:
        """The tracked jobs, and the jids tracked that no longer exist.

        Examples:
            ```python
            jobs, gone = client.jobs.tracked()
            ```
        """
        jobs, gone = self._run("tracked", (), {})
        return list(jobs), list(gone)


# -- settings, workers, tags, limits ---------------------------------------------------------


class SyncConfig(ConfigVerbs):
    """The deployment's settings (written to every shard of a sharded one).

    Examples:
        ```python
        client.config.set("heartbeat", 120)
        assert client.config.get("heartbeat") == "120"
        ```
    """

    documented_by: ClassVar[type | None] = Config

    def __init__(self, client: BlockingClient[Any]) -> None:
        super().__init__(client, lambda loop_client: loop_client.config)


class SyncWorkers(WorkersVerbs):
    """The workers the server has seen.

    Examples:
        ```python
        for worker in client.workers.counts():
            print(worker.name, worker.jobs)
        ```
    """

    documented_by: ClassVar[type | None] = Workers

    def __init__(self, client: BlockingClient[Any]) -> None:
        super().__init__(client, lambda loop_client: loop_client.workers)


class SyncFlows(FlowsVerbs):
    """Trees and chains of jobs put in one atomic call (``aqless.flows.Flows``'s verbs,
    blocking).

    Examples:
        ```python
        flow = client.flows.chain([fetch, resize, upload])
        ```
    """

    documented_by: ClassVar[type | None] = Flows

    def __init__(self, client: BlockingClient[Any]) -> None:
        super().__init__(client, lambda loop_client: loop_client.flows)


class SyncTags(TagsVerbs):
    """The tags in use, most used first.

    Examples:
        ```python
        popular = client.tags.top(count=10)
        ```
    """

    documented_by: ClassVar[type | None] = Tags

    def __init__(self, client: BlockingClient[Any]) -> None:
        super().__init__(client, lambda loop_client: loop_client.tags)


class SyncBatches(BatchesVerbs):
    """N jobs tracked as one, with callback jobs when they end (``client.batches``).

    Examples:
        ```python
        batch = client.batches.get(bid)
        ```
    """

    documented_by: ClassVar[type | None] = Batches

    def __init__(self, client: BlockingClient[Any]) -> None:
        super().__init__(client, lambda loop_client: loop_client.batches)


class SyncQueuePatterns(QueuePatternsVerbs):
    """Queue identifiers and priority patterns.

    Examples:
        ```python
        client.queue_patterns.set_identifiers({"mail": ["emails", "sms-*"]})
        ```
    """

    documented_by: ClassVar[type | None] = QueuePatterns

    def __init__(self, client: BlockingClient[Any]) -> None:
        super().__init__(client, lambda loop_client: loop_client.queue_patterns)


class SyncThrottle(ThrottleVerbs):
    """A named concurrency limit (``aqless.Throttle``'s verbs).

    Examples:
        ```python
        client.throttles["smtp"].set(5)
        holders = client.throttles["smtp"].locks()
        ```
    """

    documented_by: ClassVar[type | None] = Throttle

    def __init__(self, client: BlockingClient[Any], name: str) -> None:
        self.name = name
        super().__init__(client, lambda loop_client: loop_client.throttles[name])

    def __repr__(self) -> str:
        return f"<SyncThrottle {self.name}>"


class SyncThrottles(Facade):
    """``client.throttles[name]`` (no I/O).

    Examples:
        ```python
        smtp = client.throttles["smtp"]
        ```
    """

    def __init__(self, client: BlockingClient[Any]) -> None:
        super().__init__(client, lambda loop_client: loop_client.throttles)

    def __getitem__(self, name: str) -> SyncThrottle:
        return SyncThrottle(self._client, name)


class SyncRateLimit(RateLimitVerbs):
    """One limiter (no I/O to make): ``get()``, ``set(limit, per=s)``, ``delete()``.

    Examples:
        ```python
        client.rate_limits["partner-api"].set(10, per=60)
        ```
    """

    documented_by: ClassVar[type | None] = RateLimit

    @property
    def id(self) -> str:
        """The limiter's id (``q:<queue>`` for a queue's own)."""
        limiter: contracts.RateLimit = self._reach(self._client._current().client)
        return limiter.id

    def __repr__(self) -> str:
        return f"<SyncRateLimit {self.id}>"


class SyncRateLimits(RateLimitsVerbs):
    """The rate limits: ``client.rate_limits["api"].get()``, a queue's own, and ``.all()``.

    Examples:
        ```python
        info = client.rate_limits["partner-api"].get()
        ```
    """

    documented_by: ClassVar[type | None] = RateLimits

    def __init__(self, client: BlockingClient[Any]) -> None:
        super().__init__(client, lambda loop_client: loop_client.rate_limits)

    def __getitem__(self, name: str) -> SyncRateLimit:
        checked_limit_name(name)  # refused here, as the async client refuses it
        return SyncRateLimit(self._client, lambda client: client.rate_limits[name])

    def of_queue(self, queue: str) -> SyncRateLimit:
        """The queue's own limiter.

        Examples:
            ```python
            client.rate_limits.of_queue("emails").set(100, per=60)
            ```
        """
        return SyncRateLimit(self._client, lambda client: client.rate_limits.of_queue(queue))
