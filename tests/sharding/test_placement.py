"""Where a put goes (aqless.sharding.placement), as tables: a pure function of the shard map
and what the put names, so no Cluster is needed."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

import aqless
from aqless.sharding.map import BUCKETS, Shard, ShardMap, bucket
from aqless.sharding.placement import Placement, PutTargets, place

#: Three shards; bucket b belongs to shard b % 3.
THREE = ShardMap.first(["{a}:", "{b}:", "{c}:"])


def key_on(shard: int, stem: str = "k") -> str:
    """A key (jid, routing key, throttle name...) whose bucket shard `shard` owns in THREE."""
    return next(f"{stem}{n}" for n in range(10_000) if bucket(f"{stem}{n}") % 3 == shard)


def jids_on(shard_map: ShardMap) -> Callable[[int | None], str]:
    """A jid maker as the client's: a new jid whose bucket the given shard owns."""

    def new_jid(shard: int | None) -> str:
        return key_on(0 if shard is None else shard, "new-")

    return new_jid


PINNED = dataclasses.replace(THREE, pinned={"pinned": 2})
#: THREE grown by a generation that gives every bucket to shard 1 (jobs put before stay).
GROWN = ShardMap(2, THREE.shards, (THREE.generations[0], tuple([1] * BUCKETS)))


@pytest.mark.parametrize(
    ("shard_map", "targets", "shard"),
    [
        (THREE, PutTargets("q"), 0),  # nothing named: the new jid's owner
        (THREE, PutTargets("q", route=key_on(2)), 2),
        (PINNED, PutTargets("pinned"), 2),
        (THREE, PutTargets("q", dependencies={"d1": 1, "d2": 1}), 1),
        (THREE, PutTargets("q", throttles=[key_on(2)], rate_limits=[key_on(2, "r")]), 2),
        (THREE, PutTargets("q", dedup_id=key_on(1, "dedup-")), 1),
        (THREE, PutTargets("q", jid=key_on(2)), 2),  # a given jid: its bucket's shard
        (THREE, PutTargets("q", jid=key_on(1), route=key_on(1, "r")), 1),
        (GROWN, PutTargets("q", jid=key_on(2)), 1),  # newest generation first
    ],
)
def test_a_put_goes_where_what_it_names_lives(
    shard_map: ShardMap, targets: PutTargets, shard: int
) -> None:
    placed = place(shard_map, targets, new_jid=jids_on(shard_map))
    assert placed.shard == shard
    assert placed.jid == (
        targets.jid or jids_on(shard_map)(shard if targets != PutTargets("q") else None)
    )


def test_a_given_jid_s_job_stays_on_the_shard_holding_it() -> None:
    jid = key_on(2)
    assert place(GROWN, PutTargets("q", jid=jid), holder=2, new_jid=jids_on(GROWN)) == Placement(
        2, jid
    )


@pytest.mark.parametrize(
    ("shard_map", "targets", "named"),
    [
        (
            THREE,
            PutTargets("q", route=key_on(0), dependencies={"d": 1}),
            "dependency 'd' on shard 1",
        ),
        (PINNED, PutTargets("pinned", route=key_on(0)), "pinned queue 'pinned' on shard 2"),
        (THREE, PutTargets("q", throttles=[key_on(0)], dedup_id=key_on(1)), "dedup id"),
        (THREE, PutTargets("q", jid=key_on(0), route=key_on(1, "r")), f"jid {key_on(0)!r}"),
    ],
)
def test_targets_on_two_shards_are_refused_naming_each(
    shard_map: ShardMap, targets: PutTargets, named: str
) -> None:
    with pytest.raises(aqless.CrossShardError, match="nothing was put") as refused:
        place(shard_map, targets, new_jid=jids_on(shard_map))
    assert named in str(refused.value)


def test_a_draining_shard_keeps_no_names() -> None:
    draining = dataclasses.replace(
        GROWN, shards=(*GROWN.shards[:2], Shard(2, "{c}:", "draining", 1.0))
    )
    name = key_on(2, "t")
    assert THREE.keeper(name) == 2
    placed = place(draining, PutTargets("q", throttles=[name]), new_jid=jids_on(draining))
    assert placed.shard == draining.keeper(name) != 2
