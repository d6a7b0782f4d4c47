"""Sharded deployments (aqless.sharding.client) on a real three-primary Valkey Cluster: the shard
map, routing by bucket, routing key, dependencies and throttle, lookups that ask one shard,
pops that take from every shard, configuration and counts over the shards, a worker over
every shard, and a one-shard deployment that behaves as a plain Client.

One cluster for the session (tests.support.sharding_fixtures); each test has a deployment of
its own."""

from __future__ import annotations

import json
import re
from collections import Counter

import anyio
import pytest
from redis.crc import key_slot

import aqless
from aqless.scripts.staging import STAGED_BYTES
from aqless.sharding.map import BUCKETS, Shard, ShardMap, bucket, placed_namespaces
from tests.faults.cluster import Cluster
from tests.faults.harness import ask
from tests.support.sharding import (
    addresses,
    deployment,
    home_port,
    keys_of_a_shard,
    run_docs_snippet,
    run_example,
)
from tests.test_client_servers import free_port

pytestmark = pytest.mark.timeout(60)
pytest_plugins = ["tests.support.sharding_fixtures"]


def fcalls(cluster: Cluster, command: str = "fcall") -> int:
    """How many calls of `command` the cluster's nodes ran since their stats were reset."""
    total = 0
    for port in cluster.ports:
        stats = ask(port, "INFO", "commandstats")
        assert isinstance(stats, dict)
        total += int(stats.get(f"cmdstat_{command}", {"calls": 0})["calls"])
    return total


# -- the map, without a cluster ----------------------------------------------------------------


def test_buckets_are_an_8_byte_blake2b_of_the_key_modulo_1024() -> None:
    # hashlib.blake2b(key.encode(), digest_size=8), read big-endian
    assert bucket("") == 16_476_032_584_258_269_876 % BUCKETS
    assert bucket("customer-42") == 3_738_263_782_846_221_354 % BUCKETS
    assert bucket("é") == 14_635_220_546_840_893_743 % BUCKETS  # of the UTF-8 bytes


def test_similar_keys_spread_over_the_shards() -> None:
    """Routing keys that differ only in their last characters (customer-0...customer-11)
    land on every shard of three, none holding more than half of them."""
    owners = ShardMap.first(["{d~0}", "{d~1}", "{d~2}"])
    spread = Counter(owners.owner(f"customer-{n}") for n in range(12))
    assert set(spread) == {0, 1, 2}, spread
    assert max(spread.values()) <= 6, spread


def test_a_jids_candidates_are_its_buckets_owners_newest_first() -> None:
    first = ShardMap.first(["{d~0}", "{d~1}"])
    assert Counter(first.generations[0]) == {0: BUCKETS // 2, 1: BUCKETS // 2}
    jid = next(j for j in (f"j{n}" for n in range(100)) if first.owner(j) == 0)
    assert first.candidates(jid) == [0]
    newer = tuple(2 if b == bucket(jid) else owner for b, owner in enumerate(first.generations[0]))
    grown = ShardMap(
        2, (*first.shards, Shard(2, "{d~2}")), (first.generations[0], newer, first.generations[0])
    )
    assert grown.owner(jid) == 0  # the newest generation gave the bucket back
    assert grown.candidates(jid) == [0, 2]  # each owner once, newest first
    assert ShardMap.from_json(grown.to_json()) == grown


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        "{}",
        '{"version": 1, "shards": [], "generations": [[]]}',
        '{"version": 1, "shards": [{"id": 0, "namespace": "{a}", "state": "gone"}],'
        ' "generations": [[0]]}',
        '{"version": 1, "shards": [{"id": 0, "namespace": "{a}", "state": "active"}],'
        ' "generations": [[0]]}',  # 1 bucket, not 1024
        json.dumps(
            {
                "version": 1,
                "shards": [{"id": 0, "namespace": "{a}", "state": "active"}],
                "generations": [[1] * BUCKETS],  # an owner that is no shard
            }
        ),
    ],
)
def test_a_stored_map_that_is_not_one_is_refused(text: str) -> None:
    with pytest.raises(aqless.ConfigurationError, match="shard map"):
        ShardMap.from_json(text)


def test_shards_are_placed_on_the_primaries_with_the_fewest() -> None:
    primaries = ["a", "b", "c"]

    def primary_of(namespace: str) -> str:
        return primaries[key_slot(namespace.encode()) % 3]

    namespaces = placed_namespaces("dep", 5, primary_of, primaries)
    placed = [primary_of(ns) for ns in namespaces]
    assert sorted(placed[:3]) == primaries
    assert sorted(Counter(placed).values()) == [1, 2, 2]
    assert namespaces[0] == "{dep~0}"  # the plain tag wherever it can be
    assert all(ns.startswith(f"{{dep~{k}") and ns.endswith("}") for k, ns in enumerate(namespaces))


@pytest.mark.parametrize("name", ["", "a{b", "a}b"])
def test_a_deployment_name_with_braces_is_refused(name: str) -> None:
    with pytest.raises(aqless.ConfigurationError, match="name"):
        aqless.ShardedClient([("127.0.0.1", 1)], deployment=name, shards=1)


@pytest.mark.parametrize("shards", [0, -1, 1.5, True])
def test_a_bad_shard_count_is_refused(shards: object) -> None:
    with pytest.raises(aqless.ConfigurationError, match="shards"):
        aqless.ShardedClient([("127.0.0.1", 1)], deployment="d", shards=shards)  # type: ignore[arg-type]


async def test_no_cluster_there_is_a_lost_connection() -> None:
    client = aqless.ShardedClient([("127.0.0.1", free_port())], deployment="d", shards=1)
    with pytest.raises(aqless.ConnectionLostError, match="shard map"):
        await client.open()
    with pytest.raises(aqless.ConfigurationError, match="open the ShardedClient first"):
        client.shard_of("jid")


# -- on the cluster ----------------------------------------------------------------------------


async def test_the_map_is_made_once_and_every_client_reads_it(cluster: Cluster) -> None:
    opened: list[aqless.ShardedClient] = []

    async def open_one() -> None:
        client = aqless.ShardedClient(addresses(cluster), deployment="map", shards=3)
        opened.append(await client.open())

    try:
        async with anyio.create_task_group() as tasks:
            for _ in range(2):
                tasks.start_soon(open_one)
        first, second = opened
        assert first.shards == second.shards
        namespaces = [shard.namespace for shard in first.shards.shards]
        assert namespaces[0] == "{map~0}"
        assert len({home_port(cluster, ns) for ns in namespaces}) == 3  # a primary each
        assert all(shard.state == "active" for shard in first.shards.shards)
        stored = ask(home_port(cluster, "{map}"), "GET", "{map}:ql:shards")
        assert ShardMap.from_json(str(stored)) == first.shards
    finally:
        for client in opened:
            await client.close()
    async with deployment(cluster, "map", shards=None) as later:  # found without a count
        assert later.shards == first.shards
    url = "redis+cluster://" + ",".join(f"127.0.0.1:{port}" for port in cluster.ports[1:])
    async with aqless.ShardedClient(url, deployment="map") as by_url:
        assert by_url.shards == first.shards
        assert [c.namespace for c in by_url.clients] == namespaces
    with pytest.raises(aqless.ConfigurationError, match="has 3 shards, not 2"):
        async with deployment(cluster, "map", shards=2):
            pass
    with pytest.raises(aqless.ConfigurationError, match="no sharded deployment 'nowhere'"):
        async with deployment(cluster, "nowhere", shards=None):
            pass


async def test_one_queues_jobs_spread_over_every_shard_and_each_is_found_on_one(
    cluster: Cluster,
) -> None:
    async with deployment(cluster, "spread") as client:
        queue = client.queues["work"]
        jids = [await queue.put("app.Work", {"n": n}) for n in range(150)]
        jids += await queue.put_many([aqless.PutRequest("app.Work", {"n": n}) for n in range(150)])
        assert len(set(jids)) == 300
        lengths = [await partition.length() for partition in queue.partitions]
        assert sum(lengths) == 300
        assert min(lengths) > 0
        assert max(lengths) / (300 / 3) <= 1.5
        for port in cluster.ports:
            ask(port, "CONFIG", "RESETSTAT")
        for jid in jids:
            job = await client.jobs.get(jid)
            assert isinstance(job, aqless.Job)
            assert job.jid == jid
            assert job.client is client.shard(client.shard_of(jid))  # its verbs go there
        assert fcalls(cluster) == 300  # one job.get each: never a search of every shard
        assert await client.jobs.get("no-such-jid") is None
        for port in cluster.ports:
            ask(port, "CONFIG", "RESETSTAT")
        found = await client.jobs.get_many([*jids, "no-such-jid"])
        assert [job.jid for job in found] == jids
        assert fcalls(cluster) <= 4  # one job.getMulti per shard


async def test_a_routing_key_keeps_its_jobs_in_order_on_one_shard(cluster: Cluster) -> None:
    async with deployment(cluster, "route") as client:
        queue = client.queues["orders"]
        jids = [await queue.put("app.Work", {"n": n}, route="customer-42") for n in range(20)]
        assert {client.shard_of(jid) for jid in jids} == {client.shard_of("customer-42")}
        popped = [await queue.pop() for _ in jids]
        assert [job.jid for job in popped if job is not None] == jids
        assert await queue.pop() is None


async def test_a_dependent_goes_to_its_dependencys_shard_and_is_released(
    cluster: Cluster,
) -> None:
    async with deployment(cluster, "deps") as client:
        queue = client.queues["steps"]
        first = await queue.put("app.Work", {"step": 1})
        second = await queue.put("app.Work", {"step": 2}, depends=[first])
        assert client.shard_of(second) == client.shard_of(first)
        dependent = await client.jobs.get(second)
        assert isinstance(dependent, aqless.Job)
        assert dependent.state == aqless.JobState.DEPENDS
        job = await queue.pop()
        assert job is not None
        assert job.jid == first
        await job.complete()
        released = await client.jobs.get(second)
        assert isinstance(released, aqless.Job)
        assert released.state == aqless.JobState.WAITING


async def test_a_put_whose_constraints_name_two_shards_writes_nothing(
    cluster: Cluster,
) -> None:
    async with deployment(cluster, "cross") as client:
        queue = client.queues["steps"]
        on_zero, on_one = keys_of_a_shard(client, 0, "r")[0], keys_of_a_shard(client, 1, "r")[0]
        a = await queue.put("app.Work", {}, route=on_zero)
        b = await queue.put("app.Work", {}, route=on_one)
        jid_on_one = keys_of_a_shard(client, 1, "jid-")[0]
        throttle_on_zero = keys_of_a_shard(client, 0, "smtp-")[0]
        throttle_on_one = keys_of_a_shard(client, 1, "smtp-")[0]
        for refused in (
            {"depends": [a, b]},
            {"depends": [a], "jid": jid_on_one},
            {"depends": [a], "route": on_one},
            {"route": on_zero, "throttles": [throttle_on_one]},
            {"route": on_zero, "dedup": throttle_on_one},
            # a second throttle or limiter is counted on its own keeper only
            {"throttles": [throttle_on_zero, throttle_on_one]},
            {"rate_limits": [throttle_on_zero, throttle_on_one]},
            {"throttles": [throttle_on_zero], "rate_limits": [throttle_on_one]},
        ):
            with pytest.raises(aqless.CrossShardError, match=r"shard 0.*shard 1|shard 1.*shard 0"):
                await queue.put("app.Work", {}, **refused)
        with pytest.raises(aqless.CrossShardError):  # the whole batch is refused first
            await queue.put_many(
                [aqless.PutRequest("app.Work", {}), aqless.PutRequest("app.Work", depends=[a, b])]
            )
        assert (await queue.counts()).waiting == 2
        assert await client.jobs.get(jid_on_one) is None
        kept = await queue.put("app.Work", {}, throttles=[throttle_on_one, on_one])
        assert await client.shard_holding(kept) == 1  # names kept on one shard: put there
        assert isinstance(aqless.CrossShardError("queue.put", "x"), aqless.InvalidArgumentError)


async def test_config_is_set_on_every_shard_and_read_from_the_first(cluster: Cluster) -> None:
    async with deployment(cluster, "config") as client:
        await client.config.set("heartbeat", 77)
        assert [await shard.config.get("heartbeat") for shard in client.clients] == ["77"] * 3
        assert await client.config.get("heartbeat") == "77"
        assert (await client.config.all())["heartbeat"] == "77"
        await client.config.unset("heartbeat")
        assert [await shard.config.get("heartbeat") for shard in client.clients] == ["60"] * 3
        with pytest.raises(aqless.ConfigValueError, match="heartbeat must be a positive number"):
            await client.config.set("heartbeat", "banana")
        assert [await shard.config.get("heartbeat") for shard in client.clients] == ["60"] * 3


async def test_counts_are_sums_and_a_pause_stops_pops_on_every_shard(cluster: Cluster) -> None:
    async with deployment(cluster, "counts") as client:
        queue = client.queues["work"]
        await queue.put_many([aqless.PutRequest("app.Work", {"n": n}) for n in range(60)])
        await queue.put("app.Work", {}, delay=600)
        partitions = [await partition.counts() for partition in queue.partitions]
        assert all(counts.waiting > 0 for counts in partitions)
        counts = await queue.counts()
        assert (counts.name, counts.waiting, counts.scheduled) == ("work", 60, 1)
        assert counts.waiting == sum(c.waiting for c in partitions)
        assert await client.queues.counts() == [counts]
        assert await client.queues.names() == ["work"]
        assert await queue.length() == 61
        await queue.pause()
        assert all([(await partition.counts()).paused for partition in queue.partitions])
        assert (await queue.counts()).paused
        assert await queue.pop_many(30) == []
        assert await queue.pop() is None
        await queue.unpause()
        jobs = await queue.pop_many(30)
        assert len(jobs) == 30
        assert {client.shard_of(job.jid) for job in jobs} == {0, 1, 2}
        running = await queue.counts()
        assert (running.waiting, running.running, running.paused) == (30, 30, False)


async def test_pops_take_from_every_shard_and_drain_the_one_with_work(cluster: Cluster) -> None:
    async with deployment(cluster, "fair") as client:
        queue = client.queues["work"]
        await queue.put_many([aqless.PutRequest("app.Work", {"n": n}) for n in range(60)])
        one_at_a_time = [await queue.pop() for _ in range(3)]
        assert {client.shard_of(job.jid) for job in one_at_a_time if job} == {0, 1, 2}
        many = await queue.pop_many(6)
        assert Counter(client.shard_of(job.jid) for job in many) == {0: 2, 1: 2, 2: 2}

        lone = client.queues["lone"]
        route = keys_of_a_shard(client, 2, "key-")[0]
        jids = await lone.put_many(
            [aqless.PutRequest("app.Work", {"n": n}) for n in range(12)], route=route
        )
        assert {client.shard_of(jid) for jid in jids} == {2}
        taken = [job.jid for job in await lone.pop_many(5)]  # the others' shares fall to it
        taken += [job.jid for job in [await lone.pop() for _ in range(4)] if job]
        taken += [job.jid for job in await lone.pop_many(10)]
        assert taken == jids
        assert await lone.pop() is None


async def test_a_throttle_keeps_its_maximum_on_its_shard(cluster: Cluster) -> None:
    async with deployment(cluster, "throttle") as client:
        await client.throttles["smtp"].set(1)
        queue = client.queues["mail"]
        jids = [await queue.put("app.Work", {}, throttles=["smtp"]) for _ in range(3)]
        assert {client.shard_of(jid) for jid in jids} == {client.shard_of("smtp")}
        assert len(await queue.pop_many(3)) == 1
        assert len(await client.throttles["smtp"].locks()) == 1
        assert len(await client.throttles["smtp"].pending()) == 2


async def test_a_recurring_job_lives_on_the_shard_of_its_jid(cluster: Cluster) -> None:
    async with deployment(cluster, "recur") as client:
        rjid = await client.queues["ticks"].recur("app.Work", {}, interval=60)
        assert isinstance(await client.jobs.get(rjid), aqless.RecurringJob)
        home = client.shard(client.shard_of(rjid))
        assert isinstance(await home.jobs.get(rjid), aqless.RecurringJob)
        job = await client.queues["ticks"].pop()  # spawned at once, on the template's shard
        assert job is not None
        assert job.client is home


async def test_a_named_recurring_job_registered_twice_is_one_template(cluster: Cluster) -> None:
    async with deployment(cluster, "recur-named") as client:
        queue = client.queues["reports"]
        await queue.recur("app.Report", {"v": 1}, 3600, name="nightly", offset=3600)
        assert await queue.recur("app.Report", {"v": 2}, 3600, name="nightly") == "nightly"
        assert await queue.jobs("recurring") == ["nightly"]
        home = client.shard(client.shard_of("nightly"))
        job = await home.jobs.get("nightly")
        assert isinstance(job, aqless.RecurringJob)
        assert job.data == {"v": 2}
        assert await queue.pop() is None  # its first spawn is still an hour away


async def test_cancel_and_wait_find_the_jobs_shards(cluster: Cluster) -> None:
    async with deployment(cluster, "cancel") as client:
        queue = client.queues["work"]
        jids = await queue.put_many([aqless.PutRequest("app.Work", {}) for _ in range(9)])
        assert len({client.shard_of(jid) for jid in jids}) > 1
        await client.jobs.cancel(*jids[:6])
        assert [await client.jobs.get(jid) for jid in jids[:6]] == [None] * 6
        assert await client.wait(jids[0], timeout=1) is None  # cancelled: gone
        job = await client.jobs.get(jids[6])
        assert isinstance(job, aqless.Job)
        popped = await job.client.queues["work"].pop_many(9)
        (mine,) = [p for p in popped if p.jid == job.jid]
        await mine.complete()
        assert await client.wait(job.jid, timeout=5) == aqless.JobState.COMPLETE


async def test_jobs_put_before_a_generation_was_added_stay_found(cluster: Cluster) -> None:
    """A map whose newest generation gave every bucket to shard 1 (as adding a shard would
    give it some): jobs of shard 0 are still found, joined and replaced there."""
    shards = (Shard(0, "{grown~0}"), Shard(1, "{grown~1}"))
    grown = ShardMap(2, shards, (tuple([0] * BUCKETS), tuple([1] * BUCKETS)))
    ask(home_port(cluster, "{grown}"), "SET", "{grown}:ql:shards", grown.to_json())
    async with deployment(cluster, "grown", shards=None) as client:
        old, new = client.shard(0), client.shard(1)
        await old.queues["q"].put("app.Work", {"put": "before"}, jid="early")
        assert await new.jobs.get("early") is None  # shard 1 has the library loaded too
        queue = client.queues["q"]
        for port in cluster.ports:
            ask(port, "CONFIG", "RESETSTAT")
        found = await client.jobs.get("early")
        assert isinstance(found, aqless.Job)
        assert found.client is old
        assert fcalls(cluster) == 3  # shard 1 first (job and recurring job: none), then 0
        fresh = await queue.put("app.Work", {})
        assert client.shard_of(fresh) == 1
        assert (await new.jobs.get(fresh)) is not None
        dependent = await queue.put("app.Work", {}, depends=["early"])
        joined = await client.jobs.get(dependent)
        assert isinstance(joined, aqless.Job)
        assert (joined.client, joined.state) == (old, aqless.JobState.DEPENDS)
        await queue.put("app.Work", {"put": "again"}, jid="early")  # replaced where it is
        assert await new.jobs.get("early") is None
        replaced = await client.jobs.get("early")
        assert isinstance(replaced, aqless.Job)
        assert replaced.data == {"put": "again"}
        await client.jobs.cancel(dependent, "early")
        assert await old.queues["q"].length() == 0


async def test_a_worker_drains_one_queue_spread_over_every_shard(cluster: Cluster) -> None:
    handlers = aqless.Handlers()
    done: list[tuple[str, str | None]] = []

    @handlers.register("app.Work")
    async def work(job: aqless.Job) -> None:
        done.append((job.jid, job.client.namespace))

    async with deployment(cluster, "worker") as client:
        jids = await client.queues["work"].put_many(
            [aqless.PutRequest("app.Work", {"n": n}) for n in range(90)]
        )
        worker = aqless.ShardedWorker(
            client, ["work"], handlers=handlers, concurrency=6, burst=True
        )
        assert [w.concurrency for w in worker.workers] == [6, 6, 6]  # each may use them all
        assert worker.budget.total == 6
        with anyio.fail_after(30):
            counters = await worker.run()
        assert counters.completed == 90
        assert all(w.counters.completed > 0 for w in worker.workers)
        assert sorted(jid for jid, _ in done) == sorted(jids)
        for jid, namespace in done:
            assert namespace == client.shards.shard(client.shard_of(jid)).namespace
        counts = await client.queues["work"].counts()
        assert (counts.waiting, counts.running) == (0, 0)
        with pytest.raises(aqless.ConfigurationError, match="one slot for each"):
            aqless.ShardedWorker(client, ["work"], concurrency=2)
        with pytest.raises(aqless.InvalidValueError, match="max_jobs must be"):
            aqless.ShardedWorker(client, ["work"], max_jobs=0)


async def test_a_one_shard_deployment_is_a_plain_client_of_its_namespace(
    cluster: Cluster,
) -> None:
    async def scenario(queue: aqless.Queue | aqless.ShardedQueue) -> list[object]:
        for n, priority in enumerate((0, 5, 1)):
            await queue.put("app.Work", {"n": n}, jid=f"j{n}", priority=priority)
        popped = [job.data for job in await queue.pop_many(2)]
        counts = await queue.counts()
        return [popped, counts.waiting, counts.running, await queue.length()]

    async with deployment(cluster, "single", shards=1) as client:
        assert [shard.namespace for shard in client.shards.shards] == ["{single~0}"]
        sharded = await scenario(client.queues["work"])
        async with aqless.Client.from_cluster(addresses(cluster), namespace="{single~0}") as same:
            job = await same.jobs.get("j0")
            assert isinstance(job, aqless.Job)
            assert job.data == {"n": 0}
        async with aqless.Client.from_cluster(addresses(cluster), namespace="{plain}") as plain:
            assert await scenario(plain.queues["work"]) == sharded


def test_the_docs_sharded_example_runs_on_a_cluster(cluster: Cluster) -> None:
    result = run_docs_snippet(cluster, "tests/sharding/test_client.py")
    billed = result.stdout.splitlines()
    assert len(billed) == 2  # the job popped by hand was completed without its handler
    assert all(re.fullmatch(r"billed [78] on \{billing~\d(~\d+)?\}", line) for line in billed)


def test_the_sharded_example_keeps_each_customers_order(cluster: Cluster) -> None:
    result = run_example(cluster, "sharded.py")
    assert "queued on every shard: 60" in result.stdout
    assert "shipped 60; each customer's orders in order: True" in result.stdout
    assert "popped today over every shard: 60" in result.stdout
    waiting = re.search(r"waiting per shard: 0: (\d+), 1: (\d+), 2: (\d+)", result.stdout)
    assert waiting is not None, result.stdout
    assert sum(int(n) for n in waiting.groups()) == 60
    spread = re.search(r"customers per shard: 0: (\d+), 1: (\d+), 2: (\d+)", result.stdout)
    assert spread is not None, result.stdout
    assert sum(int(n) for n in spread.groups()) == 12


async def test_big_puts_are_staged_on_their_jobs_shard(cluster: Cluster) -> None:
    """A put of 16 KB or more goes beside the script (aqless.scripts.staging), in its
    transaction on the shard the job is placed on; the blocking client's the same."""
    big = {"text": "x" * STAGED_BYTES}
    async with deployment(cluster, "staged") as client:
        for port in cluster.ports:
            ask(port, "CONFIG", "RESETSTAT")
        queue = client.queues["work"]
        jids = [await queue.put("app.Work", big) for _ in range(6)]
        jids += await queue.put_many([aqless.PutRequest("app.Work", big) for _ in range(6)])
        assert [job.data for job in await client.jobs.get_many(jids)] == [big] * 12
        assert fcalls(cluster, "rename") == 12  # each a new job taking its staged hash
        assert not any(ask(port, "KEYS", "*-staged") for port in cluster.ports)
