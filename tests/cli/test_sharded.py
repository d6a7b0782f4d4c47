"""The CLI on a sharded deployment (--deployment) of a real three-primary Valkey Cluster:
merged reads, verbs on jids routed by the shard map, the `shards` table, and a clear exit
code for what a sharded deployment does not support."""

from __future__ import annotations

import pytest

import aqless
from tests.cli.helpers import Cli, Outcome
from tests.faults.cluster import Cluster
from tests.sharded_helpers import cluster_url, deployment, key_per_shard

pytestmark = pytest.mark.timeout(60)
pytest_plugins = ["tests.sharded_fixtures"]


class ShardedCli(Cli):
    """``await cli("queues")`` with ``--deployment NAME`` on the cluster."""

    def __init__(self, cluster: Cluster, name: str) -> None:
        super().__init__(cluster_url(cluster))
        self.name = name

    async def __call__(self, *args: str, input: str | None = None) -> Outcome:
        return await super().__call__("--deployment", self.name, *args, input=input)


async def test_the_read_commands_show_the_whole_deployment(cluster: Cluster) -> None:
    cli = ShardedCli(cluster, "cliread")
    async with deployment(cluster, "cliread") as client:
        queue = client.queues["work"]
        jids = [
            await queue.put("app.Work", {"n": n}, route=r)
            for r in key_per_shard(client)
            for n in range(2)
        ]
        later = [
            await queue.put("app.Later", {}, delay=600, route=r) for r in key_per_shard(client)
        ]
        popped = await queue.pop_many(6, worker="ann")
        assert len(popped) == 6
        for job in popped[:3]:
            await job.fail("app.Timeout", "slow")
        for job in popped[3:]:
            await job.track()

        counts = (await cli("--json", "queues")).json()
        assert [(c["name"], c["running"], c["scheduled"]) for c in counts] == [("work", 3, 3)]
        stats = (await cli("--json", "stats", "work")).json()
        assert (stats["wait"]["count"], stats["failed"]) == (6, 3)
        assert (await cli("--json", "failed")).json() == {"app.Timeout": 3}
        group = (await cli("--json", "failed", "app.Timeout")).json()
        assert group["total"] == 3
        assert {job["jid"] for job in group["jobs"]} == {job.jid for job in popped[:3]}
        tracked = (await cli("--json", "track")).json()
        assert {job["jid"] for job in tracked["jobs"]} == {job.jid for job in popped[3:]}
        workers = (await cli("--json", "workers")).json()
        assert workers == [{"name": "ann", "jobs": 3, "stalled": 0}]
        held = (await cli("--json", "workers", "ann")).json()
        assert {job["jid"] for job in held["jobs"]} == {job.jid for job in popped[3:]}
        scheduled = (await cli("--json", "jobs", "work", "scheduled")).json()
        assert sorted(scheduled["jids"]) == sorted(later)
        for jid in jids:  # each found on its own shard
            assert (await cli("--json", "get", jid)).json()["jid"] == jid
        table = await cli("jobs", "work", "scheduled")
        assert table.code == 0
        assert all(jid in table.stdout for jid in later)


async def test_verbs_on_a_jid_go_to_its_shard(cluster: Cluster) -> None:
    cli = ShardedCli(cluster, "cliverbs")
    async with deployment(cluster, "cliverbs") as client:
        queue = client.queues["work"]
        jids = [await queue.put("app.Work", {}, route=r) for r in key_per_shard(client)]
        assert (await cli("priority", jids[1], "7")).code == 0
        assert (await cli("--json", "tag", jids[2], "vip")).json()["tags"] == ["vip"]
        assert (await cli("cancel", jids[0])).code == 0
        assert await client.jobs.get(jids[0]) is None
        moved = await client.jobs.get(jids[1])
        assert isinstance(moved, aqless.Job)
        assert moved.priority == 7
        assert (await client.jobs.tagged("vip")).jids == (jids[2],)
        for job in await queue.pop_many(2):
            await job.fail("app.Crash", "boom")
        retried = (await cli("--json", "retry", "app.Crash", "--queue", "again")).json()
        assert retried == {"group": "app.Crash", "retried": 2}
        assert (await client.queues["again"].counts()).waiting == 2
        assert (await cli("get", "no-such-jid")).code == 1


async def test_the_shards_command_draws_one_row_per_shard(cluster: Cluster) -> None:
    cli = ShardedCli(cluster, "clishards")
    async with deployment(cluster, "clishards") as client:
        routes = key_per_shard(client)
        await client.queues["work"].put("app.Work", {}, route=routes[1])
        documents = (await cli("--json", "shards")).json()
        assert [d["id"] for d in documents] == [0, 1, 2]
        assert [d["waiting"] for d in documents] == [0, 1, 0]
        assert all(d["used_memory"] > 0 for d in documents)
        assert [d["queues"][0]["name"] for d in documents if d["queues"]] == ["work"] * len(
            [d for d in documents if d["queues"]]
        )
        drawn = await cli("shards")
        assert drawn.code == 0
        for shard in client.shards.shards:
            assert shard.namespace in drawn.stdout


async def test_what_a_sharded_deployment_does_not_support_exits_2(cluster: Cluster) -> None:
    cli = ShardedCli(cluster, "clino")
    async with deployment(cluster, "clino"):
        refused = await cli("put", "work", "app.Work")
        assert refused.code == 2
        assert "does not support a sharded deployment" in refused.stderr
        assert refused.stdout == ""
        both = await cli("--namespace", "x", "queues")
        assert both.code == 2
        assert "not both" in both.stderr
    plain = await Cli(cluster_url(cluster))("shards")
    assert plain.code == 2
    assert "--deployment" in plain.stderr
    missing = await ShardedCli(cluster, "nothing-here")("queues")
    assert missing.code == 2
    assert "no sharded deployment 'nothing-here'" in missing.stderr
