"""Where a put goes on a sharded deployment: a pure function of the shard map and what the
put names, with no I/O (the caller looks up what needs the servers first).

A job lives on one shard, so everything a put names that lives on one shard must agree
(`ShardMap.named`): its queue's pin, its dependencies' shards, its routing key's owner, the
keeper shard of each throttle, rate limit and dedup id it counts on (each is counted on its
keeper only), and the keeper of its fairness group in its queue (`group_key`: a group's
turns are taken on one shard). A given jid adds its bucket's shards (or the shard already
holding its job). Two different shards named is a CrossShardError, and nothing is put.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from aqless._concurrency.routing import PutTargets
from aqless.errors import CrossShardError
from aqless.sharding.map import ShardMap, group_key

__all__ = ["Placement", "PutTargets", "cross_shard", "group_key", "place"]


@dataclass(frozen=True, slots=True)
class Placement:
    """The shard a put goes to, and the job's jid."""

    shard: int
    jid: str


def place(
    shard_map: ShardMap,
    targets: PutTargets,
    *,
    holder: int | None = None,
    new_jid: Callable[[int | None], str],
) -> Placement:
    """The shard and jid of a put. `holder` is the shard already holding the given jid's job
    (looked up by the caller when its bucket names more than one shard); `new_jid(shard)`
    makes a jid whose bucket that shard owns (any shard's for None).

    Raises:
        CrossShardError: what the put names is on different shards.
    """
    named = shard_map.named(targets)
    if len(set(named.values())) > 1:
        raise cross_shard(named)
    shard = next(iter(named.values()), None)
    if not targets.jid:
        jid = new_jid(shard)
        return Placement(shard_map.owner(jid) if shard is None else shard, jid)
    # a given jid: the shard holding its job, else any shard its bucket names
    allowed = shard_map.candidates(targets.jid) if holder is None else [holder]
    if shard is not None and shard not in allowed:
        raise cross_shard({**named, f"jid {targets.jid!r}": allowed[0]})
    return Placement(allowed[0] if shard is None else shard, targets.jid)


def cross_shard(named: Mapping[str, int]) -> CrossShardError:
    """The refusal of a put whose targets are on different shards."""
    detail = ", ".join(f"{what} on shard {shard}" for what, shard in named.items())
    return CrossShardError(
        "queue.put", f"a job lives on one shard, but its {detail}; nothing was put"
    )
