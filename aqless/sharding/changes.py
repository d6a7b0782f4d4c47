"""Changes to a shard map (aqless.sharding.map), as pure functions from one map to the next:
adding shards, draining one, forgetting a drained one, pinning a queue. Each returns a new
map (the version is bumped by aqless.sharding.store when it stores it), or the same map when
there is nothing to change; a change that cannot be made raises ConfigurationError.

Adding k shards to N active ones appends a generation in which the new shards own about
k/(N+k) of the buckets, taken one at a time from whichever old shard owns the most, so each
old shard gives about as many and no bucket moves between two old shards: the fewest moves
that leave every active shard with its even share. A draining shard's buckets go, one at a
time, to the active shard owning the fewest.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from aqless.errors import ConfigurationError
from aqless.sharding.map import BUCKETS, Shard, ShardMap

__all__ = ["drained", "forgotten", "grown", "pinned"]


def grown(shard_map: ShardMap, namespaces: Sequence[str]) -> ShardMap:
    """The map with a shard for each of `namespaces` (ids from `shard_map.new_id` up) and
    a new generation giving them their share of the buckets."""
    if not namespaces:
        raise ConfigurationError("add at least one shard")
    first = shard_map.new_id
    added = tuple(Shard(first + k, namespace) for k, namespace in enumerate(namespaces))
    givers = [shard.id for shard in shard_map.active]
    receivers = [shard.id for shard in added]
    owners = list(shard_map.generations[-1])
    held = _buckets_by_owner(owners, givers)
    share = BUCKETS // (len(givers) + len(receivers))
    taken = dict.fromkeys(receivers, 0)
    for receiver in receivers:
        while taken[receiver] < share:
            giver = max(givers, key=lambda shard: len(held[shard]))
            owners[held[giver].pop()] = receiver
            taken[receiver] += 1
    return replace(
        shard_map,
        shards=(*shard_map.shards, *added),
        generations=(*shard_map.generations, tuple(owners)),
    )


def drained(shard_map: ShardMap, shard_id: int, now: float) -> ShardMap:
    """The map with shard `shard_id` draining since `now`: a new generation gives its
    buckets to the active shards owning the fewest, so no new job goes to it."""
    shard = _existing(shard_map, shard_id)
    if shard.state == "draining":
        return shard_map
    others = [other.id for other in shard_map.active if other.id != shard_id]
    if not others:
        raise ConfigurationError(f"shard {shard_id} is the last active shard: add one first")
    pinned_here = sorted(queue for queue, pin in shard_map.pinned.items() if pin == shard_id)
    if pinned_here:
        raise ConfigurationError(
            f"shard {shard_id} holds the pinned queues {pinned_here} (their throttles and "
            "rate limits live there): it cannot be drained"
        )
    owners = list(shard_map.generations[-1])
    held = _buckets_by_owner(owners, others)
    for index, owner in enumerate(owners):
        if owner == shard_id:
            receiver = min(others, key=lambda other: len(held[other]))
            owners[index] = receiver
            held[receiver].append(index)
    shards = tuple(
        replace(each, state="draining", since=now) if each.id == shard_id else each
        for each in shard_map.shards
    )
    return replace(shard_map, shards=shards, generations=(*shard_map.generations, tuple(owners)))


def forgotten(shard_map: ShardMap, shard_id: int) -> ShardMap:
    """The map without the draining shard `shard_id`: where an older generation named it,
    the newest owner of the bucket stands instead (a lookup asks it anyway), and
    generations that became alike are merged. Its id is never given again."""
    shard = _existing(shard_map, shard_id)
    if shard.state != "draining":
        raise ConfigurationError(f"shard {shard_id} is not draining: remove it first")
    newest = shard_map.generations[-1]
    rewritten: list[tuple[int, ...]] = []
    for owners in shard_map.generations:
        kept = tuple(
            newest[index] if owner == shard_id else owner for index, owner in enumerate(owners)
        )
        if rewritten and rewritten[-1] == kept:
            continue
        rewritten.append(kept)
    return replace(
        shard_map,
        shards=tuple(each for each in shard_map.shards if each.id != shard_id),
        generations=tuple(rewritten),
        next_id=shard_map.new_id,
    )


def pinned(shard_map: ShardMap, queue: str) -> ShardMap:
    """The map with `queue` pinned to the keeper of its name (`ShardMap.keeper`, unless it
    is pinned already), where its own throttle and rate limit are kept."""
    if shard_map.pin_of(queue) is not None:
        return shard_map
    return replace(shard_map, pinned={**shard_map.pinned, queue: shard_map.keeper(queue)})


def _existing(shard_map: ShardMap, shard_id: int) -> Shard:
    try:
        return shard_map.shard(shard_id)
    except KeyError:
        raise ConfigurationError(f"no shard {shard_id} in this deployment") from None


def _buckets_by_owner(owners: Sequence[int], shards: Iterable[int]) -> dict[int, list[int]]:
    held: dict[int, list[int]] = {shard: [] for shard in shards}
    for index, owner in enumerate(owners):
        if owner in held:
            held[owner].append(index)
    return held
