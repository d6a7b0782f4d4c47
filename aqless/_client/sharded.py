"""A sharded deployment's jobs, settings and workers: each verb the plain one's, routed over
the shards (aqless._concurrency.routing): a jid asked only of the shards its bucket names, a
listing of every shard at once, interleaved; settings written to every shard (whose workers
read their own) and read from the first."""

from __future__ import annotations

from typing import ClassVar, Protocol

from aqless._client.config import Config
from aqless._client.jobs import Jobs
from aqless._client.workers import Workers
from aqless._concurrency.routing import ShardedPart, by_jids, every, in_order, routed
from aqless.contracts.derived import ShardedConfigRouted, ShardedJobsRouted, ShardedWorkersRouted
from aqless.job import Job, RecurringJob
from aqless.models import SeenWorkers


class _Shard(Protocol):
    """A shard's plain client, as its parts are taken from it."""

    @property
    def jobs(self) -> Jobs: ...
    @property
    def config(self) -> Config: ...
    @property
    def workers(self) -> Workers: ...


class ShardedJobs(ShardedPart, ShardedJobsRouted):
    """Jobs by id (each asked only of the shards its bucket names), tag, tracking,
    completion and failure.

    Examples:
        ```python
        job = await client.jobs.get(jid)  # asks only the shards its bucket names
        ```
    """

    #: the plain class whose verbs document the derived ones
    documented_by: ClassVar[type] = Jobs

    def _part(self, client: _Shard) -> Jobs:
        return client.jobs

    async def get(self, jid: str) -> Job | RecurringJob | None:
        """The job or recurring job with this id, or None.

        Examples:
            ```python
            job = await client.jobs.get(jid)
            ```
        """
        found = await self._client.find_job(jid)
        return None if found is None else found[1]

    # they hand back the plain jobs' `aqless.Job`s, so they are routed here
    get_many = routed(Jobs.get_many, by_jids, in_order)
    tracked = routed(Jobs.tracked, every)


class ShardedConfig(ShardedPart, ShardedConfigRouted):
    """The deployment's settings: written to every shard, read from the first.

    Examples:
        ```python
        await client.config.set("heartbeat", 120)  # on every shard
        ```
    """

    #: the plain class whose verbs document the derived ones
    documented_by: ClassVar[type] = Config

    def _part(self, client: _Shard) -> Config:
        return client.config


class ShardedWorkers(ShardedPart, ShardedWorkersRouted):
    """The workers every shard has seen, merged by name: a ShardedWorker's worker has the
    same name on every shard."""

    #: the plain class whose verbs document the derived ones
    documented_by: ClassVar[type] = Workers

    def _part(self, client: _Shard) -> Workers:
        return client.workers

    async def seen(self) -> SeenWorkers:
        """The workers that hold jobs or publish a record on any shard, each with both;
        and the other clients the shards list."""
        return SeenWorkers.of(await self.counts(), await self.records())
