"""Sharded pub/sub for a sharded deployment: each shard's script publishes with SPUBLISH,
heard only on the primary holding the shard's slot, instead of PUBLISH, which a Cluster
broadcasts to every node (N shards would cost every node N shards' messages).

The script reads the shard's ``ql:config`` option ``aqless-pubsub``: ``sharded`` means
SPUBLISH (aqless/scripts/lua/lib/events.lua). A ShardedClient writes it on a new shard before
the map naming the shard is stored, so every client that learns of the shard finds it set,
and its clients listen as the option says (``Client(sharded_pubsub=...)``). A deployment
made before keeps PUBLISH until the option is set on its shards.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from redis.asyncio.cluster import RedisCluster

from aqless.sharding.map import ShardMap

__all__ = ["OPTION", "SHARDED", "mark", "mark_new", "publishes_sharded"]

#: The ``ql:config`` option the script reads, and its value for SPUBLISH.
OPTION: Final = "aqless-pubsub"
SHARDED: Final = "sharded"


def _config_key(namespace: str) -> str:
    return f"{namespace}:ql:config"


async def mark(redis: RedisCluster, namespaces: Iterable[str]) -> None:
    """Make the scripts of these (new) shards publish with SPUBLISH."""
    for namespace in namespaces:
        await redis.hset(_config_key(namespace), OPTION, SHARDED)


async def mark_new(redis: RedisCluster, current: ShardMap, following: ShardMap) -> None:
    """`mark` the shards `following` names and `current` does not."""
    known = {shard.namespace for shard in current.shards}
    await mark(
        redis, [shard.namespace for shard in following.shards if shard.namespace not in known]
    )


async def publishes_sharded(redis: RedisCluster, namespace: str) -> bool:
    """Whether the shard's script publishes with SPUBLISH."""
    return bool(await redis.hget(_config_key(namespace), OPTION) == SHARDED)
