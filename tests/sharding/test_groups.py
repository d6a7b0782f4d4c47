"""Fair groups on a sharded deployment: a group's jobs all go to the shard its key names,
so that shard's pops take the group's turns; a queue's groups are read over every shard."""

from __future__ import annotations

import collections

import pytest

import aqless
from aqless.errors import CrossShardError
from aqless.sharding.map import ShardMap
from aqless.sharding.placement import PutTargets, group_key, place
from tests.faults.cluster import Cluster
from tests.support.clients import ManualClock
from tests.support.sharding import deployment

pytestmark = pytest.mark.timeout(60)
pytest_plugins = ["tests.support.sharding_fixtures"]

THREE = ShardMap.first(["{a}:", "{b}:", "{c}:"])


def test_a_grouped_put_goes_to_the_keeper_of_its_queue_and_group() -> None:
    for group in ("tenant-1", "tenant-2", "tenant-3"):
        placed = place(THREE, PutTargets("q", group=group), new_jid=lambda shard: f"j{shard}")
        assert placed.shard == THREE.keeper(group_key("q", group))


def test_a_group_and_a_route_on_two_shards_are_refused() -> None:
    group = "tenant-1"
    home = THREE.keeper(group_key("q", group))
    route = next(f"r{n}" for n in range(1000) if THREE.owner(f"r{n}") != home)
    with pytest.raises(CrossShardError, match="group 'tenant-1'"):
        place(THREE, PutTargets("q", group=group, route=route), new_jid=lambda shard: "j")


async def test_a_groups_jobs_live_on_one_shard_and_its_settings_there(cluster: Cluster) -> None:
    async with deployment(cluster, "groups") as client:
        queue = client.queues["q"]
        await queue.set_group_weight("big", 2)
        requests = [aqless.PutRequest("app.Work", {"g": "big"}, group="big")] * 30
        requests += [aqless.PutRequest("app.Work", {"g": "-"})] * 9
        jids = await queue.put_many(requests)
        home = client.shards.keeper(group_key("q", "big"))
        assert {client.shard_of(jid) for jid in jids[:30]} == {home}
        records = {record.name: record for record in await queue.groups()}
        assert (records["big"].waiting, records["big"].weight) == (30, 2.0)
        assert records[None].waiting == 9  # on every shard, grouped or not
        popped = await queue.pop_many(39)
        assert collections.Counter(job.data["g"] for job in popped) == {"big": 30, "-": 9}


async def test_a_groups_rate_limit_holds_on_its_shard_and_the_others_go_on(
    cluster: Cluster,
) -> None:
    clock = ManualClock()
    async with deployment(cluster, "grouprate", clock=clock) as client:
        queue = client.queues["q"]
        await queue.set_group_rate_limit("limited", 5, per=1)
        await queue.set_group_rate_limit(None, 2)  # on every shard: 2 a second on each
        requests = [aqless.PutRequest("app.Work", {"g": "limited"}, group="limited")] * 20
        requests += [aqless.PutRequest("app.Work", {"g": "free"}, group="free")] * 20
        await queue.put_many(requests)
        for route in "abcdef":
            await queue.put("app.Work", {"g": "-"}, route=route)
        per_shard = collections.Counter(client.shard_of(route) for route in "abcdef")
        home = client.shards.keeper(group_key("q", "limited"))
        records = {record.name: record for record in await queue.groups()}
        assert (records["limited"].rate_limit, records["limited"].rate_period) == (5, 1.0)
        assert (records[None].rate_limit, records["free"].rate_limit) == (2, 0)
        popped = await queue.pop_many(50)
        counts = collections.Counter(job.data["g"] for job in popped)
        assert (counts["limited"], counts["free"]) == (5, 20)
        assert max(per_shard.values()) > 2  # (so that the default group's limit bites)
        assert counts["-"] == sum(min(2, n) for n in per_shard.values())
        assert {client.shard_of(job.jid) for job in popped if job.data["g"] == "limited"} == {home}
        assert [r.rate_used for r in await queue.groups() if r.name == "limited"] == [5]
        assert await queue.pop_many(50) == []  # the limit holds: its jobs wait
        clock.advance(1.01)
        again = await queue.pop_many(50)
        assert collections.Counter(job.data["g"] for job in again)["limited"] == 5
        await queue.set_group_rate_limit("limited", None)
        rest = await queue.pop_many(50)
        assert collections.Counter(job.data["g"] for job in rest)["limited"] == 10
