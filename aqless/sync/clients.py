"""The blocking clients: ``aqless.sync.Client`` (of one server) and ``aqless.sync.ShardedClient``
(of a sharded deployment). Both offer the contract's surface through the same façades
(aqless.sync.parts); they differ only in the async client they hold and in the sharded
deployment's own verbs."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, Generic, Self, TypeVar

from aqless import contracts
from aqless.client import Client as PlainClient
from aqless.job import Job, RecurringJob
from aqless.sharding.client import ShardedClient as AsyncShardedClient
from aqless.sharding.reads import ShardReport
from aqless.sync.facades import SyncEvents
from aqless.sync.parts import (
    SyncBatches,
    SyncConfig,
    SyncFlows,
    SyncJobs,
    SyncQueuePatterns,
    SyncQueues,
    SyncRateLimits,
    SyncShardedQueues,
    SyncTags,
    SyncThrottles,
    SyncWorkers,
)
from aqless.sync.runtime import BlockingClient
from aqless.sync.spool import SyncShardedSpool, SyncSpool

C = TypeVar("C", bound=contracts.Client)
Q = TypeVar("Q", SyncQueues, SyncShardedQueues)


class SyncClientSurface(BlockingClient[C], Generic[C, Q]):
    """What every blocking client offers: the contract's accessors (no I/O to make), its
    events, opening and closing."""

    def __init__(self, queues: Callable[[BlockingClient[C]], Q]) -> None:
        super().__init__()
        self.queues: Q = queues(self)
        self.jobs = SyncJobs(self)
        self.batches = SyncBatches(self)

        self.flows = SyncFlows(self)
        self.config = SyncConfig(self)
        self.workers = SyncWorkers(self)
        self.throttles = SyncThrottles(self)
        self.rate_limits = SyncRateLimits(self)
        self.tags = SyncTags(self)
        self.queue_patterns = SyncQueuePatterns(self)

    def open(self) -> Self:
        """Connect now rather than at the first call (the embedded server, the shard map)."""
        self.call(lambda client: client.open())
        self._lifecycle.opened()
        return self

    def events(self, *channels: str, workers: Sequence[str] = ()) -> SyncEvents:
        """The server's events, blocking (see ``aqless.Client.events``): ``with
        client.events("completed") as events: for event in events: ...``."""
        return SyncEvents(self, channels, workers)

    @property
    def worker_name(self) -> str:
        """The name this client's pops and locks go under."""
        return self._current().client.worker_name

    @property
    def sharded(self) -> bool:
        """Whether the deployment is sharded (see ``aqless.Client.sharded``)."""
        return self._current().client.sharded


class Client(SyncClientSurface[PlainClient, SyncQueues]):
    """A blocking ``aqless.Client``: ``aqless.sync.Client(url, **options)`` takes the same
    arguments and checks them here (ConfigurationError), before anything connects.

    Safe to share between threads (make one per process, e.g. at import time of a Django
    or Flask app). Connects on the first call; ``close()`` (or ``with``) releases
    everything, and a client still open at interpreter exit is closed then. The errors
    are aqless's own (``JobNotFoundError``, ``ConnectionLostError``...).

    Examples:
        ```python
        with aqless.sync.Client("redis://localhost:6379/0") as client:
            jid = client.queues["emails"].put("app.jobs.SendEmail", {"to": "ada@example.com"})
        ```
    """

    def __init__(self, url: str | None = None, **options: Any) -> None:
        self._url = url
        self._options = options
        super().__init__(SyncQueues)

    def _make(self) -> PlainClient:
        return PlainClient(self._url, **self._options)

    async def _job_client(self, client: PlainClient, job: Job | RecurringJob) -> PlainClient:
        return client

    @property
    def url(self) -> str | None:
        """The server's URL (the embedded one's once the first call has started it)."""
        return self._current().client.url

    def spool(
        self,
        *,
        capacity: int = 10_000,
        path: str | os.PathLike[str] | None = None,
        dedup_ttl: float = 86_400.0,
        batch: int = 500,
    ) -> SyncSpool[PlainClient]:
        """A spool for this client's puts while the server cannot be reached (see
        ``aqless.Client.spool``): ``spool.put("emails", Send, data)`` blocks until the job
        is queued or kept, and returns an `aqless.PutReceipt`. The spool is made on the
        client's loop now, so its settings and file are checked at the call.

        Args:
            capacity: the most puts the spool holds (default 10,000); one more, while the
                server is away, is a SpoolFullError.
            path: a file that keeps the puts across a restart of the process (one process
                per file: a pre-forking server's workers need ``{pid}`` in it, which stands
                for the process's id). Default None: in memory.
            dedup_ttl: seconds each put's dedup id is held on the server (default 86,400:
                a day).
            batch: puts sent per round trip of a flush (default 500).

        Raises:
            InvalidValueError: a setting outside its rule (see `aqless.Spool`).
            ConfigurationError: the file at `path` is in use by another process's spool,
                or damaged.

        Examples:
            ```python
            client = aqless.sync.Client()
            spool = client.spool(path="/var/lib/app/puts-{pid}.spool")
            receipt = spool.put("receipts", "app.jobs.SendReceipt", {"order": 7})
            ```
        """
        settings = {"capacity": capacity, "path": path, "dedup_ttl": dedup_ttl, "batch": batch}
        return SyncSpool(self, settings)

    def __repr__(self) -> str:
        return f"<aqless.sync.Client {self._url or 'default'}>"


# mypy checks this bound before it infers the routed verbs of the same import cycle
# (aqless._concurrency.routing); tests/typing/test_contracts.py proves it from outside
class ShardedClient(SyncClientSurface[AsyncShardedClient, SyncShardedQueues]):  # type: ignore[type-var, unused-ignore]
    """A blocking ``aqless.ShardedClient``: ``aqless.sync.ShardedClient(nodes,
    deployment="billing")`` takes the same arguments and checks them here
    (ConfigurationError), before anything connects; the shard map is read (or made, with
    `shards`) at the first call. Each call routes as the async one does and raises the same
    errors (``CrossShardError``...); a job's verbs go to its own shard.

    Safe to share between threads, one per process; ``close()`` (or ``with``) releases
    every shard's connections.

    Examples:
        ```python
        client = aqless.sync.ShardedClient("redis+cluster://node-1:7000", deployment="billing")
        jid = client.queues["invoices"].put("billing.Invoice", {"id": 7}, route="customer-42")
        client.close()
        ```
    """

    def __init__(
        self,
        nodes: str | Sequence[tuple[str, int]],
        *,
        deployment: str,
        shards: int | None = None,
        **options: Any,
    ) -> None:
        self._nodes = nodes
        self.deployment = deployment
        self._shards = shards
        self._options = options
        super().__init__(SyncShardedQueues)

    def _make(self) -> AsyncShardedClient:
        return AsyncShardedClient(
            self._nodes, deployment=self.deployment, shards=self._shards, **self._options
        )

    async def _job_client(self, client: AsyncShardedClient, job: Job | RecurringJob) -> PlainClient:
        """The client of the job's shard (the one of that namespace in this process)."""
        namespace = job._client.namespace if job._client is not None else None
        for shard in client.clients:
            if shard.namespace == namespace:
                return shard
        return await client.client_of_jid(job.jid)

    def shard_of(self, key: str) -> int:
        """The shard a put of this jid (or routing key) goes to.

        Examples:
            ```python
            shard_id = client.shard_of("customer-42")
            ```
        """

        async def owner(client: AsyncShardedClient) -> int:
            return client.shard_of(key)

        return self.call(owner)

    def spool(
        self,
        *,
        capacity: int = 10_000,
        path: str | os.PathLike[str] | None = None,
        dedup_ttl: float = 86_400.0,
        batch: int = 500,
    ) -> SyncShardedSpool:
        """A spool for this client's puts while a shard cannot be reached (see
        ``aqless.ShardedClient.spool``): ``spool.put("invoices", Invoice, data)`` places
        the put, and blocks until it is queued on its shard or kept for it. The spool is
        made on the client's loop now (the shard map read first, if not yet), so its
        settings and file are checked at the call.

        Args:
            capacity: the most puts the spool holds (default 10,000).
            path: a file that keeps the puts across a restart of the process (``{pid}``
                stands for the process's id). Default None: in memory.
            dedup_ttl: seconds each put's dedup id is held on its shard (default 86,400).
            batch: puts sent to a shard per round trip of a flush (default 500).

        Raises:
            InvalidValueError: a setting outside its rule (see `aqless.Spool`).
            ConfigurationError: the file at `path` is in use by another process's spool,
                or damaged.

        Examples:
            ```python
            client = aqless.sync.ShardedClient("redis+cluster://node-1:7000", deployment="billing")
            spool = client.spool(path="/var/lib/app/puts-{pid}.spool")
            receipt = spool.put("invoices", "billing.Invoice", {"id": 7}, route="customer-42")
            ```
        """
        settings = {"capacity": capacity, "path": path, "dedup_ttl": dedup_ttl, "batch": batch}
        return SyncShardedSpool(self, settings)

    def shard_report(self) -> list[ShardReport]:
        """Each shard's queue counts, lag and primary's memory.

        Examples:
            ```python
            for shard in client.shard_report():
                print(shard.id, shard.node, shard.lag)
            ```
        """
        return self.call(lambda client: client.shard_report())

    def __repr__(self) -> str:
        return f"<aqless.sync.ShardedClient {self.deployment}>"
