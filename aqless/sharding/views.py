"""A sharded client's queues, jobs, configuration, queue patterns and workers: each verb the
contract's (aqless.contracts), routed (aqless.sharding.routing) and merged
(aqless.sharding.reads).

A jid is asked only of the shards its bucket names; a listing of every shard at once,
interleaved; configuration (settings, queue identifiers and priority patterns) is written
to every shard, whose workers read their own, and read from the first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from aqless.client import Client, Config, Jobs, Queues, Workers
from aqless.job import Job, RecurringJob
from aqless.models import SeenWorkers
from aqless.patterns import QueuePatterns
from aqless.scaling.estimate import QueueScaling, every_queue_scaling
from aqless.sharding.queue import ShardedQueue
from aqless.sharding.reads import (
    concatenated,
    counted,
    every_queue_counts,
    in_order,
    merged_page,
    names,
    nothing,
    one,
    page_of,
    tracked_jobs,
    united,
    worker_counts,
    worker_records,
    workers_jobs,
)
from aqless.sharding.routing import by_jid, by_jids, every, first, paged, routed

if TYPE_CHECKING:
    from aqless.sharding.deployment import Deployment as ShardedClient

__all__ = [
    "ShardedConfig",
    "ShardedJobs",
    "ShardedQueuePatterns",
    "ShardedQueues",
    "ShardedWorkers",
]


class ShardedPart:
    """A part of a sharded client (no I/O to make)."""

    def __init__(self, client: ShardedClient) -> None:
        self._client = client


class ShardedQueues(ShardedPart):
    """``client.queues[name]`` (no I/O), and the queues over every shard."""

    def __getitem__(self, name: str) -> ShardedQueue:
        return ShardedQueue(self._client, name)

    def _part(self, client: Client) -> Queues:
        return client.queues

    names = routed(Queues.names, every, names)
    counts = routed(Queues.counts, every, every_queue_counts)

    async def scaling(
        self, target_p95: float, *, previous: Sequence[QueueScaling] = ()
    ) -> list[QueueScaling]:
        """Every queue's `ShardedQueue.scaling`, each over the time since its reading in
        `previous` (the last call's answer), if any."""
        return await every_queue_scaling(self, target_p95, previous)


class ShardedJobs(ShardedPart):
    """Jobs by id (each asked only of the shards its bucket names), tag, tracking,
    completion and failure."""

    def _part(self, client: Client) -> Jobs:
        return client.jobs

    async def get(self, jid: str) -> Job | RecurringJob | None:
        """The job or recurring job with this id, or None."""
        found = await self._client.find_job(jid)
        return None if found is None else found[1]

    get_many = routed(Jobs.get_many, by_jids, in_order)
    stored_result = routed(Jobs.stored_result, by_jid(), one)
    progress = routed(Jobs.progress, by_jids, united)
    checkpoints = routed(Jobs.checkpoints, by_jids, united)
    tagged = routed(Jobs.tagged, paged("listing"), merged_page)
    tracked = routed(Jobs.tracked, every, tracked_jobs)
    completed = routed(Jobs.completed, paged("listing"), page_of)
    failed = routed(Jobs.failed, paged("listing"), merged_page)
    failure_groups = routed(Jobs.failure_groups, every, counted)
    #: jobs that depend on each other, and a flow's, are on one shard: cancelled together
    cancel = routed(Jobs.cancel, by_jids, concatenated)


class ShardedConfig(ShardedPart):
    """The deployment's settings: written to every shard, read from the first."""

    def _part(self, client: Client) -> Config:
        return client.config

    get = routed(Config.get, first, one)
    all = routed(Config.all, first, one)
    set = routed(Config.set, every, nothing)
    unset = routed(Config.unset, every, nothing)


class ShardedQueuePatterns(ShardedPart):
    """``client.queue_patterns``: set on every shard (each shard's workers read their
    own), read from the first."""

    def _part(self, client: Client) -> QueuePatterns:
        return client.queue_patterns

    identifiers = routed(QueuePatterns.identifiers, first, one)
    set_identifiers = routed(QueuePatterns.set_identifiers, every, nothing)
    priorities = routed(QueuePatterns.priorities, first, one)
    set_priorities = routed(QueuePatterns.set_priorities, every, nothing)


class ShardedWorkers(ShardedPart):
    """The workers every shard has seen, merged by name: a ShardedWorker's worker has the
    same name on every shard."""

    def _part(self, client: Client) -> Workers:
        return client.workers

    counts = routed(Workers.counts, every, worker_counts)
    jobs = routed(Workers.jobs, every, workers_jobs)
    forget = routed(Workers.forget, every, nothing)
    records = routed(Workers.records, every, worker_records)

    async def seen(self) -> SeenWorkers:
        """The workers that hold jobs or publish a record on any shard, each with both;
        and the other clients the shards list."""
        return SeenWorkers.of(await self.counts(), await self.records())
