"""Changing the number of shards of a live deployment: adding shards, draining one, and
forgetting it once it is empty (the steps behind `ShardedClient.add_shards`,
`remove_shard` and `forget_shard`).

Each step is one compare-and-set of the shard map (aqless.sharding.store). Clients and workers
learn of it when they next read the map (aqless.sharding.client: on a timer, and at once when a
jid is not where their map says). Until then a client puts by its older map: its jobs land
on a shard that stays one of their bucket's owners, so they are found; and a draining shard
is forgotten only once it holds no job and has drained for `grace` seconds, longer than
any client's re-reading interval, so no client still puts there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from redis.asyncio.cluster import RedisCluster

from aqless.client import Client
from aqless.errors import ConfigurationError, ShardNotEmptyError
from aqless.sharding import changes as shard_changes
from aqless.sharding import pubsub as shard_pubsub
from aqless.sharding import store as shard_store
from aqless.sharding.map import ShardMap, placed_namespaces

__all__ = ["add", "copy_config", "drain", "forget", "jobs_held"]


async def add(
    redis: RedisCluster,
    deployment: str,
    count: int,
    primary_of: Callable[[str], str],
    primaries: Sequence[str],
) -> ShardMap:
    """Add `count` shards, each on a primary holding the fewest shards; returns the map."""
    if type(count) is not int or count < 1:
        raise ConfigurationError(f"add a whole number >= 1 of shards, got {count!r}")

    def grow(current: ShardMap) -> ShardMap:
        namespaces = placed_namespaces(
            deployment,
            count,
            primary_of,
            primaries,
            first_id=current.new_id,
            placed=[shard.namespace for shard in current.shards],
        )
        return shard_changes.grown(current, namespaces)

    # the new shards publish with SPUBLISH before any client learns of them
    before = partial(shard_pubsub.mark_new, redis)
    return await shard_store.changed(redis, deployment, grow, before)


async def drain(redis: RedisCluster, deployment: str, shard_id: int, now: float) -> ShardMap:
    """Mark the shard draining: no new job goes to it; returns the map."""
    return await shard_store.changed(
        redis, deployment, lambda current: shard_changes.drained(current, shard_id, now)
    )


async def forget(
    redis: RedisCluster,
    deployment: str,
    shard: Client,
    shard_id: int,
    now: float,
    grace: float,
) -> ShardMap:
    """Drop the draining shard `shard_id` (whose client is `shard`) from the map.

    Raises:
        ShardNotEmptyError: it still holds jobs, or has drained for less than `grace`
            seconds.
        ConfigurationError: no such shard, or it is not draining.
    """
    held = await jobs_held(shard)
    if held:
        raise ShardNotEmptyError(shard_id, f"it still holds {held} jobs")

    def drop(current: ShardMap) -> ShardMap:
        since = current.shard(shard_id).since if shard_id in _ids(current) else None
        if since is not None and now - since < grace:
            raise ShardNotEmptyError(
                shard_id,
                f"it has drained for {now - since:.1f} s, less than the {grace} s every "
                "client takes to read the map again",
            )
        return shard_changes.forgotten(current, shard_id)

    return await shard_store.changed(redis, deployment, drop)


async def copy_config(source: Client, target: Client) -> None:
    """Set on `target` every option set on `source`, and its queue identifier and priority
    patterns (a new shard takes the deployment's configuration; options left at their
    defaults stay so)."""
    stored = await source.redis.hgetall(f"{source.prefix}config")
    for option, value in stored.items():
        await target.config.set(str(option), str(value))
    patterns = source.queue_patterns  # configuration too, read by each shard's workers
    await target.queue_patterns.set_identifiers(await patterns.identifiers())
    await target.queue_patterns.set_priorities(await patterns.priorities())


async def jobs_held(client: Client) -> int:
    """The jobs a shard holds in its queues (any state but complete) and failure groups."""
    queued = sum(
        counts.waiting
        + counts.running
        + counts.stalled
        + counts.scheduled
        + counts.depends
        + counts.throttled
        + counts.recurring
        for counts in await client.queues.counts()
    )
    return queued + sum((await client.jobs.failure_groups()).values())


def _ids(shard_map: ShardMap) -> set[int]:
    return {shard.id for shard in shard_map.shards}
