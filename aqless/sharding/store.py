"""The shard map in the Cluster (its key: aqless.sharding.map.map_key): read it, make it once,
change it with a compare-and-set.

A change reads the stored text, computes the next map from it (aqless.sharding.changes), and
stores it with a version one higher only if the stored text is still the one it read (a
three-line script: GET, compare, SET); otherwise it reads again and recomputes. So two
clients changing the map at once both land, one after the other, and no client ever sees
a version go back.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace

from redis.asyncio.cluster import RedisCluster

from aqless.errors import ConfigurationError
from aqless.sharding.map import ShardMap, map_key

__all__ = ["changed", "made", "read"]

# KEYS[1] the map; ARGV[1] the text the change was computed from, ARGV[2] the new text
_COMPARE_AND_SET = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2])
  return 1
end
return 0
"""

#: how many times a change is recomputed when other clients keep changing the map
TRIES = 50


async def read(redis: RedisCluster, deployment: str) -> ShardMap | None:
    """The stored map, None if the deployment has none."""
    stored = await redis.get(map_key(deployment))
    return None if stored is None else ShardMap.from_json(str(stored))


async def made(redis: RedisCluster, deployment: str, first: ShardMap) -> ShardMap:
    """The stored map, `first` stored if there was none (the first client to make it
    wins; every other reads its map)."""
    await redis.set(map_key(deployment), first.to_json(), nx=True)
    stored = await read(redis, deployment)
    if stored is None:  # deleted in between
        raise ConfigurationError(f"the shard map of {deployment!r} vanished as it was made")
    return stored


async def changed(
    redis: RedisCluster,
    deployment: str,
    change: Callable[[ShardMap], ShardMap],
    before: Callable[[ShardMap, ShardMap], Awaitable[None]] | None = None,
) -> ShardMap:
    """Apply `change` to the stored map and store the result as the next version, again
    from the newer map while another client's change lands first; returns the map stored
    (the one read, if `change` changed nothing). `before(current, following)`, if given,
    is awaited before each attempt to store `following` (to prepare new shards).

    Raises:
        ConfigurationError: no such deployment, `change` refused, or the map kept
            changing under it.
    """
    key = map_key(deployment)
    for _ in range(TRIES):
        text = await redis.get(key)
        if text is None:
            raise ConfigurationError(f"no sharded deployment {deployment!r} on this cluster")
        current = ShardMap.from_json(str(text))
        following = change(current)
        if following == current:
            return current
        following = replace(following, version=current.version + 1)
        if before is not None:
            await before(current, following)
        if await redis.eval(_COMPARE_AND_SET, 1, key, str(text), following.to_json()):
            return following
    raise ConfigurationError(f"the shard map of {deployment!r} kept changing: try again")
