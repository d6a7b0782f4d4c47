"""The CLI on a sharded deployment (--deployment) of a real three-primary Valkey Cluster:
merged reads, verbs on jids routed by the shard map, the `shards` table, puts, recurring
jobs, throttles, rate limits and queue patterns, and a clear exit code for a bad
invocation."""

from __future__ import annotations

import pytest

import aqless
from tests.faults.cluster import Cluster
from tests.support.cli import Cli, Outcome
from tests.support.sharding import cluster_url, deployment, key_per_shard, keys_of_a_shard

pytestmark = pytest.mark.timeout(60)
pytest_plugins = ["tests.support.sharding_fixtures"]


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
        assert workers == [{"name": "ann", "jobs": 3, "stalled": 0, "info": None}]
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


async def test_a_queue_of_every_shard_is_listed_and_emptied(cluster: Cluster) -> None:
    cli = ShardedCli(cluster, "cliempty")
    async with deployment(cluster, "cliempty") as client:
        queue = client.queues["work"]
        jids = [await queue.put("app.Work", {}, route=r) for r in key_per_shard(client)]
        later = [await queue.put("app.Work", {}, delay=60, route=r) for r in key_per_shard(client)]
        waiting = (await cli("--json", "jobs", "work", "waiting")).json()["jids"]
        assert sorted(waiting) == sorted(jids)
        emptied = (await cli("--json", "queue", "empty", "work", "--yes")).json()
        assert emptied["cancelled"] == {"depends": 0, "scheduled": 3, "waiting": 3, "throttled": 0}
        assert await client.jobs.get_many([*jids, *later]) == []


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


async def test_a_bad_sharded_invocation_exits_2(cluster: Cluster) -> None:
    cli = ShardedCli(cluster, "clino")
    async with deployment(cluster, "clino"):
        both = await cli("--namespace", "x", "queues")
        assert both.code == 2
        assert "not both" in both.stderr
    plain = await Cli(cluster_url(cluster))("shards")
    assert plain.code == 2
    assert "--deployment" in plain.stderr
    missing = await ShardedCli(cluster, "nothing-here")("queues")
    assert missing.code == 2
    assert "no sharded deployment 'nothing-here'" in missing.stderr


async def test_put_places_each_job_on_its_shard(cluster: Cluster) -> None:
    cli = ShardedCli(cluster, "cliput")
    async with deployment(cluster, "cliput") as client:
        routes = key_per_shard(client)
        put = await cli("--json", "put", "work", "app.Work", '{"n": 1}', "--route", routes[2])
        (jid,) = put.json()["jids"]
        assert await client.shard_holding(jid) == 2
        job = await client.jobs.get(jid)
        assert isinstance(job, aqless.Job)
        assert job.data == {"n": 1}
        throttle = keys_of_a_shard(client, 1, "smtp-")[0]
        held = await cli("--json", "put", "work", "app.Work", "--throttles", throttle)
        assert await client.shard_holding(held.json()["jids"][0]) == 1
        lines = "".join(f'{{"data": {{"n": {n}}}}}\n' for n in range(30))
        many = await cli("--json", "put", "bulk", "app.Work", "--file", "-", input=lines)
        jids = many.json()["jids"]
        assert len(jids) == 30
        assert {await client.shard_holding(jid) for jid in jids} == {0, 1, 2}
        assert (await client.queues["bulk"].counts()).waiting == 30
        routed = await cli("--json", "put", "one", "app.Work", "--file", "-", "--route", routes[0],
                           input=lines)  # fmt: skip
        assert {await client.shard_holding(jid) for jid in routed.json()["jids"]} == {0}
        crossed = await cli(
            "put", "work", "app.Work", "--route", routes[0], "--throttles", throttle
        )
        assert crossed.code == 3
        assert "shard" in crossed.stderr
    plain = await Cli(cluster_url(cluster))("put", "work", "app.Work", "--route", "r")
    assert plain.code == 2
    assert "--route is for a sharded deployment" in plain.stderr


async def test_recurring_jobs_of_every_shard(cluster: Cluster) -> None:
    cli = ShardedCli(cluster, "clirecur")
    async with deployment(cluster, "clirecur") as client:
        rjids = [keys_of_a_shard(client, shard, "tick-")[0] for shard in range(3)]
        for rjid in rjids:
            await client.queues["ticks"].recur("app.Tick", {}, 600, jid=rjid)
        assert {await client.shard_holding(rjid) for rjid in rjids} == {0, 1, 2}
        listed = (await cli("--json", "recurring", "list")).json()
        assert sorted(job["jid"] for job in listed) == sorted(rjids)
        assert (await cli("--json", "recurring", "list", "other")).code == 1  # no such queue
        assert len((await cli("--json", "recurring", "list", "ticks")).json()) == 3
        typo = await cli("jobs", "tick", "recurring")  # known on every shard it is on
        assert typo.code == 1
        assert "no queue 'tick' (did you mean 'ticks'?)" in typo.stderr
        shown = (await cli("--json", "recurring", "show", rjids[1])).json()
        assert (shown["jid"], shown["interval"], len(shown["next_runs"])) == (rjids[1], 600, 5)
        changed = await cli("recurring", "update", rjids[2], "--interval", "60", "--priority", "3")
        assert changed.code == 0
        template = await client.jobs.get(rjids[2])
        assert isinstance(template, aqless.RecurringJob)
        assert (template.interval, template.priority) == (60, 3)
        assert (await cli("recurring", "cancel", rjids[0])).code == 0
        assert await client.jobs.get(rjids[0]) is None
        assert (await cli("recurring", "show", "no-such-rjid")).code == 1


async def test_throttles_and_rate_limits_on_the_shards_that_hold_them(cluster: Cluster) -> None:
    cli = ShardedCli(cluster, "clilimits")
    async with deployment(cluster, "clilimits") as client:
        assert (await cli("throttle", "set", "smtp", "3")).code == 0
        keeper = client.keeper_of("smtp")
        assert (await client.shard(keeper).throttles["smtp"].get()).maximum == 3
        shown = (await cli("--json", "throttle", "show", "smtp")).json()
        assert (shown["id"], shown["maximum"]) == ("smtp", 3)
        assert (await cli("throttle", "set", "mail", "2", "--queue")).code == 0
        await client.reread_map()  # the CLI's client pinned the queue
        pin = client.shards.pin_of("mail")
        assert pin is not None
        assert (await client.shard(pin).queues["mail"].throttle()).maximum == 2
        own = (await cli("--json", "throttle", "show", "mail", "--queue")).json()
        assert (own["id"], own["maximum"]) == (f"{client.shard(pin).prefix}q:mail", 2)
        assert (await cli("throttle", "delete", "smtp")).code == 0
        assert (await cli("throttle", "show", "smtp")).code == 1

        assert (await cli("rate-limit", "set", "api", "5", "--per", "2")).code == 0
        assert (await client.shard(client.keeper_of("api")).rate_limits["api"].get()).limit == 5
        assert (await cli("rate-limit", "set", "mail", "7", "--per", "60", "--queue")).code == 0
        assert (await client.shard(pin).queues["mail"].rate_limit.get()).limit == 7
        listed = (await cli("--json", "rate-limit", "list")).json()
        assert [(d["id"], d["limit"]) for d in listed] == sorted([("api", 5), (own["id"], 7)])
        shown = (await cli("--json", "rate-limit", "show", "mail", "--queue")).json()
        assert (shown["limit"], shown["period"]) == (7, 60.0)
        assert (await cli("rate-limit", "delete", "api")).code == 0
        assert [d["id"] for d in (await cli("--json", "rate-limit", "list")).json()] == [own["id"]]


async def test_queue_patterns_are_written_to_every_shard(cluster: Cluster) -> None:
    cli = ShardedCli(cluster, "clipatterns")
    async with deployment(cluster, "clipatterns") as client:
        set_ = await cli("patterns", "set-identifier", "mail", "mail-*", "!mail-spam")
        assert set_.code == 0
        ordered = await cli("patterns", "set-priorities", "urgent-*", "default", "fairly:bulk-*")
        assert ordered.code == 0
        for shard in client.clients:
            identifiers = await shard.queue_patterns.identifiers()
            assert identifiers["mail"] == ["mail-*", "!mail-spam"]
            priorities = await shard.queue_patterns.priorities()
            assert [str(group) for group in priorities] == ["urgent-*", "default", "fairly:bulk-*"]
        shown = (await cli("--json", "patterns", "show")).json()
        assert shown["identifiers"]["mail"] == ["mail-*", "!mail-spam"]
        assert len(shown["priorities"]) == 3
        assert (await cli("patterns", "unset-identifier", "mail")).code == 0
        for shard in client.clients:
            assert "mail" not in await shard.queue_patterns.identifiers()
        assert (await cli("patterns", "unset-identifier", "mail")).code == 1
