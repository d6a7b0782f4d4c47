"""A blocking client of a sharded deployment: ``aqless.sync.ShardedClient``.

It is ``aqless.sync.Client``'s runtime (one loop on a daemon thread, a fresh one after a
fork, closed at exit) holding an ``aqless.ShardedClient`` instead of a ``Client``: each
call routes as the async one does (aqless.sharding.client) and raises the same errors
(``CrossShardError``...). Jobs are ``SyncJob`` snapshots whose verbs go to their own
shard's client.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Unpack

from aqless import client as aio
from aqless.job import Job, RecurringJob
from aqless.models import ThrottleInfo
from aqless.puts import JobClass, PutOptions, PutRequest, PutResult
from aqless.sharding import client as sharded
from aqless.sharding.queue import PartialPopError
from aqless.sharding.reads import ShardReport
from aqless.sync.plain import BlockingClient, JobLookups, QueueNames, QueueReads, SyncJob

__all__ = [
    "ShardedClient",
    "SyncShardedConfig",
    "SyncShardedJobs",
    "SyncShardedQueue",
    "SyncShardedQueues",
    "SyncThrottle",
    "SyncThrottles",
]


class ShardedClient(BlockingClient[sharded.ShardedClient]):
    """A blocking ``aqless.ShardedClient``: ``aqless.sync.ShardedClient(nodes,
    deployment="billing")`` takes the same arguments and checks them here
    (ConfigurationError), before anything connects; the shard map is read (or made, with
    `shards`) at the first call.

    Safe to share between threads, one per process; ``close()`` (or ``with``) releases
    every shard's connections.
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
        super().__init__()
        self.queues = SyncShardedQueues(self)
        self.jobs = SyncShardedJobs(self)
        self.config = SyncShardedConfig(self)
        self.throttles = SyncThrottles(self)

    def _make(self) -> sharded.ShardedClient:
        return sharded.ShardedClient(
            self._nodes, deployment=self.deployment, shards=self._shards, **self._options
        )

    async def _job_client(
        self, client: sharded.ShardedClient, job: Job | RecurringJob
    ) -> aio.Client:
        """The client of the job's shard (the one of that namespace in this process)."""
        namespace = job._client.namespace if job._client is not None else None
        for shard in client.clients:
            if shard.namespace == namespace:
                return shard
        return await client.home(job.jid)

    def shard_of(self, key: str) -> int:
        """The shard a put of this jid (or routing key) goes to."""

        async def owner(client: sharded.ShardedClient) -> int:
            return client.shard_of(key)

        return self.call(owner)

    def shard_report(self) -> list[ShardReport]:
        """Each shard's queue counts, lag and primary's memory."""
        return self.call(lambda client: client.shard_report())

    def __repr__(self) -> str:
        return f"<aqless.sync.ShardedClient {self.deployment}>"


class SyncShardedQueues(QueueNames):
    """``client.queues[name]`` (no I/O), and the queues over every shard."""

    def __getitem__(self, name: str) -> SyncShardedQueue:
        return SyncShardedQueue(self._client, name)


class SyncShardedQueue(QueueReads):
    """A queue of a sharded deployment, blocking (``aqless.ShardedQueue``'s verbs)."""

    _client: ShardedClient

    def put(
        self,
        klass: JobClass,
        data: Any = None,
        *,
        route: str | None = None,
        **options: Unpack[PutOptions],
    ) -> str:
        """Put a job on the shard it belongs to (`route`: a routing key whose jobs share
        one shard); returns its jid. CrossShardError (nothing put) when its constraints
        name two shards."""
        return self._client.call(
            lambda client: client.queues[self.name].put(klass, data, route=route, **options)
        )

    def put_result(
        self,
        klass: JobClass,
        data: Any = None,
        *,
        route: str | None = None,
        **options: Unpack[PutOptions],
    ) -> PutResult:
        """`put`, telling whether it was deduplicated (see ``aqless.Queue.put_result``)."""
        return self._client.call(
            lambda client: client.queues[self.name].put_result(klass, data, route=route, **options)
        )

    def put_many(
        self, requests: Iterable[PutRequest], *, route: str | None = None, batch: int = 1000
    ) -> list[str]:
        """Put many ``aqless.PutRequest`` jobs, each on its shard; returns their jids.
        Every request is placed first: a CrossShardError puts nothing."""
        return [result.jid for result in self.put_many_results(requests, route=route, batch=batch)]

    def put_many_results(
        self, requests: Iterable[PutRequest], *, route: str | None = None, batch: int = 1000
    ) -> list[PutResult]:
        """`put_many`, telling what each put did (see ``aqless.Queue.put_many_results``)."""
        listed = list(requests)
        return self._client.call(
            lambda client: client.queues[self.name].put_many_results(
                listed, route=route, batch=batch
            )
        )

    def pop(self, *, worker: str | None = None) -> SyncJob | None:
        """The next job from the shards (the first shard asked moves on at every call),
        locked for `worker` (this client's name by default); None when there is none."""
        job = self._client.call(lambda client: client.queues[self.name].pop(worker=worker))
        return None if job is None else SyncJob(self._client, job)

    def pop_many(self, count: int, *, worker: str | None = None) -> list[SyncJob]:
        """Up to `count` jobs, taken from every shard. PartialPopError (its `jobs` are
        SyncJobs, held: run them) when a shard refused after others popped."""
        try:
            jobs = self._client.call(
                lambda client: client.queues[self.name].pop_many(count, worker=worker)
            )
        except PartialPopError as partial:
            partial.jobs = [SyncJob(self._client, job) for job in partial.jobs]
            raise
        return [SyncJob(self._client, job) for job in jobs]

    def pause(self, *, stopjobs: bool = False) -> list[str]:
        """Pause the queue on every shard; the jids timed out."""
        return self._client.call(lambda client: client.queues[self.name].pause(stopjobs=stopjobs))

    def unpause(self) -> None:
        self._client.call(lambda client: client.queues[self.name].unpause())


class SyncShardedJobs(JobLookups):
    """Jobs by id, each asked only of the shards its bucket names."""


class SyncShardedConfig:
    """The deployment's settings: written to every shard, read from the first."""

    def __init__(self, client: ShardedClient) -> None:
        self._client = client

    def get(self, option: str) -> str | None:
        return self._client.call(lambda client: client.config.get(option))

    def all(self) -> dict[str, str]:
        return self._client.call(lambda client: client.config.all())

    def set(self, option: str, value: str | float) -> None:
        self._client.call(lambda client: client.config.set(option, value))

    def unset(self, option: str) -> None:
        self._client.call(lambda client: client.config.unset(option))


class SyncThrottles:
    """``client.throttles[name]`` (no I/O): the throttle on the shard keeping its name."""

    def __init__(self, client: ShardedClient) -> None:
        self._client = client

    def __getitem__(self, name: str) -> SyncThrottle:
        return SyncThrottle(self._client, name)


class SyncThrottle:
    """A named concurrency limit of the deployment (``aqless.Throttle``'s verbs)."""

    def __init__(self, client: ShardedClient, name: str) -> None:
        self._client = client
        self.name = name

    def __repr__(self) -> str:
        return f"<SyncThrottle {self.name}>"

    def get(self) -> ThrottleInfo:
        return self._client.call(lambda client: client.throttles[self.name].get())

    def set(self, maximum: int, *, expiration: int = 0) -> None:
        """At most `maximum` jobs hold it at once (0: unlimited)."""
        self._client.call(
            lambda client: client.throttles[self.name].set(maximum, expiration=expiration)
        )

    def delete(self) -> None:
        self._client.call(lambda client: client.throttles[self.name].delete())

    def locks(self) -> list[str]:
        """The jids holding it."""
        return self._client.call(lambda client: client.throttles[self.name].locks())

    def pending(self) -> list[str]:
        """The jids waiting for it."""
        return self._client.call(lambda client: client.throttles[self.name].pending())
