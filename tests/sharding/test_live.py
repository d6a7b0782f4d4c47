"""A live sharded deployment whose map changes: shards added while a worker drains, two
clients adding at once, a shard drained and forgotten, a client with an old map finding a
job on a shard it did not know, and queues pinned to one shard by their own throttle or
rate limit. On a real three-primary Valkey Cluster (tests/support/sharding.py)."""

from __future__ import annotations

import re
from collections import Counter

import anyio
import pytest

import aqless
from aqless.sharding import changes as shard_changes
from aqless.sharding.map import BUCKETS, ShardMap
from tests.faults.cluster import Cluster
from tests.faults.harness import ask
from tests.support.cli import Cli, Outcome
from tests.support.sharding import (
    addresses,
    cluster_url,
    deployment,
    home_port,
    keys_of_a_shard,
    run_example,
)
from tests.support.worker import Gate, Recorder, one
from tests.support.worker_processes import eventually

pytestmark = pytest.mark.timeout(60)
pytest_plugins = ["tests.support.sharding_fixtures"]

WORK = "app.Work"


# -- the map's changes, without a cluster ------------------------------------------------------


def test_adding_shards_moves_their_share_taken_evenly_from_the_old_ones() -> None:
    three = ShardMap.first(["{d~0}", "{d~1}", "{d~2}"])
    four = shard_changes.grown(three, ["{d~3}"])
    old, new = four.generations
    moved = [index for index in range(BUCKETS) if old[index] != new[index]]
    assert len(moved) == BUCKETS // 4  # k/(N+k) of the buckets, no more
    assert {new[index] for index in moved} == {3}  # only to the new shard
    assert sorted(Counter(old[index] for index in moved).values()) == [85, 85, 86]
    assert sorted(Counter(new).values()) == [256, 256, 256, 256]
    five = shard_changes.grown(four, ["{d~4}"])
    assert (
        max(Counter(five.generations[-1]).values()) - min(Counter(five.generations[-1]).values())
        <= 2
    )
    assert [shard.id for shard in five.shards] == [0, 1, 2, 3, 4]


def test_a_drained_shard_owns_nothing_new_and_is_forgotten_from_every_generation() -> None:
    three = ShardMap.first(["{d~0}", "{d~1}", "{d~2}"])
    draining = shard_changes.drained(three, 1, now=100.0)
    assert draining.shard(1).state == "draining"
    assert draining.shard(1).since == 100.0
    assert 1 not in draining.generations[-1]
    assert sorted(Counter(draining.generations[-1]).values()) == [512, 512]
    jid = next(j for j in (f"j{n}" for n in range(1000)) if three.owner(j) == 1)
    assert draining.candidates(jid) == [draining.owner(jid), 1]  # still found there
    assert ShardMap.from_json(draining.to_json()) == draining
    gone = shard_changes.forgotten(draining, 1)
    assert [shard.id for shard in gone.shards] == [0, 2]
    assert gone.generations == (draining.generations[-1],)  # the two became alike
    assert gone.new_id == 3  # never 1 or 2 again
    assert ShardMap.from_json(gone.to_json()).new_id == 3
    with pytest.raises(aqless.ConfigurationError, match="not draining"):
        shard_changes.forgotten(three, 1)
    with pytest.raises(aqless.ConfigurationError, match="last active"):
        shard_changes.drained(shard_changes.drained(shard_changes.drained(three, 0, 1), 2, 1), 1, 1)
    pinned = shard_changes.pinned(three, "mail")
    assert pinned.pinned == {"mail": three.owner("mail")}
    with pytest.raises(aqless.ConfigurationError, match="pinned queues"):
        shard_changes.drained(pinned, three.owner("mail"), 1.0)
    assert shard_changes.pinned(pinned, "mail") is pinned


def test_a_named_throttles_keeper_stays_put_when_shards_are_added() -> None:
    two = ShardMap.first(["{d~0}", "{d~1}"])
    three = shard_changes.grown(two, ["{d~2}"])
    moved = next(n for n in (f"smtp-{k}" for k in range(1000)) if three.owner(n) == 2)
    assert three.keeper(moved) == two.owner(moved)  # its state is where it was made
    stayed = next(n for n in (f"smtp-{k}" for k in range(1000)) if three.owner(n) != 2)
    assert three.keeper(stayed) == three.owner(stayed)
    without_old = shard_changes.drained(three, two.owner(moved), now=1)
    assert without_old.keeper(moved) == 2  # its keeper drained: the newer owner
    assert shard_changes.pinned(three, moved).pinned == {moved: two.owner(moved)}


# -- on the cluster ----------------------------------------------------------------------------


async def test_a_full_server_refusing_a_map_change_is_a_typed_error(cluster: Cluster) -> None:
    """The map's calls go over redis-py, not the script: an OOM there is still a
    ServerFullError, and the map is unchanged."""
    async with deployment(cluster, "fullmap") as client:
        port = home_port(cluster, "{fullmap}")  # the node holding the map
        ask(port, "CONFIG", "SET", "maxmemory", "1")
        try:
            with pytest.raises(aqless.ServerFullError) as refused:
                await client.pin("emails")
        finally:
            ask(port, "CONFIG", "SET", "maxmemory", "0")
        assert refused.value.condition == "OOM"
        assert await client.reread_map() is False
        assert "emails" not in client.shards.pinned


async def test_a_full_shard_refusing_a_call_made_on_every_shard_is_a_typed_error(
    cluster: Cluster,
) -> None:
    """A call fanned out to the shards at once (pause) that one shard's server refuses
    raises that refusal, ServerFullError, not the task group's ExceptionGroup."""
    async with deployment(cluster, "fullpause") as client:
        port = home_port(cluster, client.shards.shard(0).namespace)
        ask(port, "CONFIG", "SET", "maxmemory", "1")
        try:
            with pytest.raises(aqless.ServerFullError) as refused:
                await client.queues["q"].pause()
        finally:
            ask(port, "CONFIG", "SET", "maxmemory", "0")
        assert refused.value.condition == "OOM"
        await client.queues["q"].unpause()


async def test_two_clients_adding_shards_at_once_both_land(cluster: Cluster) -> None:
    async with (
        deployment(cluster, "race", shards=2) as one,
        deployment(cluster, "race", shards=None) as two,
    ):

        async def add(client: aqless.ShardedClient) -> None:
            await client.add_shards(1)

        async with anyio.create_task_group() as adding:
            adding.start_soon(add, one)
            adding.start_soon(add, two)
        await one.reread_map()
        await two.reread_map()
        assert one.shards == two.shards
        assert one.shards.version == 3
        assert [shard.id for shard in one.shards.shards] == [0, 1, 2, 3]
        assert len(one.shards.generations) == 3
        assert sorted(Counter(one.shards.generations[-1]).values()) == [256, 256, 256, 256]
        # each new shard on a primary holding the fewest: 2 + 2 over three primaries
        ports = Counter(home_port(cluster, shard.namespace) for shard in one.shards.shards)
        assert sorted(ports.values()) == [1, 1, 2]


async def test_a_shard_added_while_a_worker_drains_loses_nothing(cluster: Cluster) -> None:
    handlers = aqless.Handlers()
    done: list[str] = []

    @handlers.register(WORK)
    async def work(job: aqless.Job) -> None:
        await anyio.sleep(0.005)
        done.append(job.jid)

    async with (
        deployment(cluster, "grow", shards=2, refresh=0.2) as client,
        deployment(
            cluster, "grow", shards=None, refresh=3600
        ) as stale,  # reads the map only on a miss
    ):
        queue = client.queues["work"]
        before = await queue.put_many([aqless.PutRequest(WORK, {"n": n}) for n in range(150)])
        worker = aqless.ShardedWorker(client, ["work"], handlers=handlers, concurrency=4)
        with anyio.fail_after(40):
            async with anyio.create_task_group() as running:
                running.start_soon(worker.run)
                await eventually(lambda: len(done) >= 20, what="20 jobs done")
                async with deployment(cluster, "grow", shards=None) as admin:
                    grown = await admin.add_shards(1)
                assert [shard.id for shard in grown.shards] == [0, 1, 2]
                await eventually(  # its timer notices
                    lambda: client.shards.version == grown.version, what="the new map read"
                )
                after = await queue.put_many([aqless.PutRequest(WORK, {"n": n}) for n in range(60)])
                assert {client.shard_of(jid) for jid in after} == {0, 1, 2}
                await eventually(lambda: len(done) >= 210, what="every job done")
                worker.stop()
        assert sorted(done) == sorted(before + after)  # each once: none lost, none twice
        assert 2 in worker.by_shard
        assert worker.by_shard[2].counters.completed > 0  # started for the new shard
        new_jid = next(jid for jid in after if client.shard_of(jid) == 2)
        assert stale.shards.version == 1
        found = await stale.jobs.get(new_jid)  # not on shard 0 or 1: it reads the map again
        assert isinstance(found, aqless.Job)
        assert found.state == aqless.JobState.COMPLETE
        assert stale.shards.version == grown.version
        for jid in before:  # old jids stay where they were put, and are found
            job = await client.jobs.get(jid)
            assert isinstance(job, aqless.Job)
            assert job.state == aqless.JobState.COMPLETE


async def test_a_throttle_and_the_config_hold_on_a_grown_deployment(cluster: Cluster) -> None:
    async with deployment(cluster, "keeper", shards=2) as client:
        await client.config.set("heartbeat", 42)
        will_move = shard_changes.grown(client.shards, ["{next}"])  # the same buckets move
        smtp = next(
            n
            for n in (f"smtp-{k}" for k in range(1000))
            if client.shard_of(n) == 1 and will_move.owner(n) == 2
        )
        await client.throttles[smtp].set(1)
        grown = await client.add_shards(1)
        assert grown.owner(smtp) == 2  # its bucket moved, but its throttle did not
        queue = client.queues["mail"]
        jids = [await queue.put(WORK, {}, throttles=[smtp]) for _ in range(3)]
        assert {await client.shard_holding(jid) for jid in jids} == {1}  # where the maximum is
        assert len(await queue.pop_many(3)) == 1
        assert (await client.throttles[smtp].get()).maximum == 1
        assert await client.shard(2).config.get("heartbeat") == "42"
        assert await client.shard(2).config.get("grace-period") == "10"  # a default stays one
        new = client.shard(2)
        assert await new.redis.hget(f"{new.prefix}config", "grace-period") is None


async def test_a_removed_shard_drains_to_nothing_then_is_forgotten(cluster: Cluster) -> None:
    recorder = Recorder()
    handlers, done = one(recorder, WORK), recorder.jids

    async with deployment(cluster, "shrink", refresh=0.2) as client:
        queue = client.queues["work"]
        jids = await queue.put_many([aqless.PutRequest(WORK, {"n": n}) for n in range(90)])
        on_two = [jid for jid in jids if client.shard_of(jid) == 2]
        assert on_two
        removed = await client.remove_shard(2)
        assert removed.shard(2).state == "draining"
        assert [shard.id for shard in removed.active] == [0, 1]
        later = await queue.put_many([aqless.PutRequest(WORK, {"n": n}) for n in range(30)])
        assert {client.shard_of(jid) for jid in later} == {0, 1}
        for jid in on_two:  # still found on the draining shard
            job = await client.jobs.get(jid)
            assert isinstance(job, aqless.Job)
            assert job.client is client.shard(2)
        with pytest.raises(aqless.ShardNotEmptyError, match=f"holds {len(on_two)} jobs"):
            await client.forget_shard(2, grace=0)
        worker = aqless.ShardedWorker(
            client, ["work"], handlers=handlers, concurrency=3, burst=True
        )
        with anyio.fail_after(30):
            await worker.run()
        assert sorted(done) == sorted(jids + later)
        assert await client.shard(2).queues["work"].length() == 0
        with pytest.raises(aqless.ShardNotEmptyError, match="drained for"):
            await client.forget_shard(2, grace=600)
        with pytest.raises(aqless.ConfigurationError, match="not draining"):
            await client.forget_shard(1, grace=0)
        forgotten = await client.forget_shard(2, grace=0)
        assert [shard.id for shard in forgotten.shards] == [0, 1]
        assert all(2 not in owners for owners in forgotten.generations)
        assert len(client.clients) == 2
        assert await client.queues["work"].length() == 0
        with pytest.raises(aqless.ConfigurationError, match="no shard 2"):
            await client.remove_shard(2)
        async with deployment(cluster, "shrink", shards=None) as later_client:
            assert later_client.shards == forgotten
            added = await later_client.add_shards(1)
            assert [shard.id for shard in added.shards] == [0, 1, 3]  # 2 is never reused


async def test_a_queues_own_throttle_pins_it_and_holds_over_a_sharded_worker(
    cluster: Cluster,
) -> None:
    gauge = Gate(0.02)
    handlers, done = one(gauge, WORK), gauge.entered

    async with deployment(cluster, "pinned") as client:
        queue = client.queues["mail"]
        await queue.set_throttle(2)
        home = client.shard_of("mail")
        assert client.shards.pinned == {"mail": home}
        assert (await queue.throttle()).maximum == 2
        async with deployment(
            cluster, "pinned", shards=None
        ) as other:  # reads the pin from the map
            assert other.shards.pin_of("mail") == home
        jids = [await queue.put(WORK, {"n": n}) for n in range(10)]
        jids += await queue.put_many([aqless.PutRequest(WORK, {"n": n}) for n in range(10)])
        assert {await client.shard_holding(jid) for jid in jids} == {home}
        elsewhere = next(key for key in keys_of_a_shard(client, (home + 1) % 3, "r"))
        with pytest.raises(aqless.CrossShardError, match="pinned queue 'mail'"):
            await queue.put(WORK, {}, route=elsewhere)
        worker = aqless.ShardedWorker(
            client, ["mail"], handlers=handlers, concurrency=9, burst=True
        )
        with anyio.fail_after(30):
            await worker.run()
        assert sorted(done) == sorted(jids)
        assert gauge.most == 2
        with pytest.raises(aqless.ConfigurationError, match="pinned queues"):
            await client.remove_shard(home)

        limited = client.queues["api"]
        await limited.set_rate_limit(5, per=60)
        assert client.shards.pin_of("api") == client.shard_of("api")
        info = await limited.rate_limit.get()
        assert (info.limit, info.period) == (5, 60)


@pytest.mark.parametrize("routed", [True, False], ids=["one shard", "every shard"])
async def test_a_sharded_workers_slots_are_one_budget(cluster: Cluster, routed: bool) -> None:
    """With every job on one shard, that shard's worker uses every slot; spread over the
    shards, the workers together never run more jobs than the slots."""
    gauge = Gate(0.03)
    handlers = one(gauge, WORK)

    async with deployment(cluster, f"budget-{routed}") as client:
        route = keys_of_a_shard(client, 1, "customer-")[0] if routed else None
        jids = await client.queues["work"].put_many(
            [aqless.PutRequest(WORK, {"n": n}) for n in range(48)], route=route
        )
        assert len({client.shard_of(jid) for jid in jids}) == (1 if routed else 3)
        worker = aqless.ShardedWorker(
            client, ["work"], handlers=handlers, concurrency=4, burst=True
        )
        with anyio.fail_after(30):
            counters = await worker.run()
        assert counters.completed == 48
        assert gauge.most == 4  # all the slots, and never more
        assert worker.budget.free() == 4
        assert await client.queues["work"].length() == 0


async def test_a_sharded_worker_takes_max_jobs_over_every_shard(cluster: Cluster) -> None:
    recorder = Recorder()
    handlers, done = one(recorder, WORK), recorder.jids

    async with deployment(cluster, "maxjobs") as client:
        queue = client.queues["work"]
        await queue.put_many([aqless.PutRequest(WORK, {"n": n}) for n in range(30)])
        worker = aqless.ShardedWorker(
            client, ["work"], handlers=handlers, concurrency=4, max_jobs=10
        )
        with anyio.fail_after(30):
            counters = await worker.run()
        assert (counters.started, counters.completed, len(done)) == (10, 10, 10)
        assert worker.limit_reached == "max_jobs"
        assert (await queue.counts()).waiting == 20


async def test_a_map_change_with_bad_arguments_is_refused(cluster: Cluster) -> None:
    async with deployment(cluster, "refusals", shards=1) as client:
        for count in (0, -1, 1.5):
            with pytest.raises(aqless.ConfigurationError, match="whole number"):
                await client.add_shards(count)  # type: ignore[arg-type]
        with pytest.raises(aqless.ConfigurationError, match="last active"):
            await client.remove_shard(0)
        with pytest.raises(aqless.ConfigurationError, match="refresh"):
            aqless.ShardedClient(addresses(cluster), deployment="refusals", refresh=0)
        assert client.shards.version == 1


async def test_the_cli_adds_drains_and_forgets_shards(cluster: Cluster) -> None:
    cli = Cli(cluster_url(cluster))

    async def run(*args: str) -> Outcome:
        return await cli("--deployment", "cli", *args)

    async with deployment(cluster, "cli", shards=2) as client:
        await client.queues["work"].put_many([aqless.PutRequest(WORK, {}) for _ in range(40)])
        shown = (await run("--json", "shards")).json()
        assert [(s["id"], s["state"]) for s in shown] == [(0, "active"), (1, "active")]
        assert sum(s["waiting"] for s in shown) == 40
        added = await run("shards", "add")
        assert added.code == 0, added.stderr
        assert "{cli~2" in added.stdout  # on the primary holding no shard yet
        removed = (await run("--json", "shards", "remove", "0")).json()
        assert [(s["id"], s["state"]) for s in removed] == [
            (0, "draining"),
            (1, "active"),
            (2, "active"),
        ]
        held = removed[0]["waiting"]
        assert held > 0
        refused = await run("shards", "forget", "0", "--grace", "0")
        assert refused.code == 3
        assert f"still holds {held} jobs" in refused.stderr
        await client.reread_map()
        left = await client.shard(0).queues["work"].peek(100)
        await client.jobs.cancel(*[job.jid for job in left])
        forgotten = (await run("--json", "shards", "forget", "0", "--grace", "0")).json()
        assert [s["id"] for s in forgotten] == [1, 2]
        missing = await cli("--deployment", "nowhere", "shards", "add")
        assert missing.code == 2
        assert "no sharded deployment 'nowhere'" in missing.stderr
        plain = await cli("shards", "add")
        assert plain.code == 2
        assert "needs a sharded deployment" in plain.stderr


def test_the_resize_example_loses_no_job(cluster: Cluster) -> None:
    result = run_example(cluster, "sharded_resize.py")
    assert "shards: [0, 1, 2]" in result.stdout
    assert "new puts on the draining shard 0: 0" in result.stdout
    assert "shards after forgetting 0: [1, 2]" in result.stdout
    assert "done 102 of 102, each once: True" in result.stdout
    assert "completions heard from every shard: True" in result.stdout  # the new one too
    on_new = re.search(r"new puts on the new shard: (\d+)", result.stdout)
    assert on_new is not None
    assert int(on_new.group(1)) > 0
