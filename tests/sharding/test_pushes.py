"""A ShardedWorker takes pushed jobs (aqless._worker.budget): each idle shard's worker offers
a share of the slots, so a job put on any shard reaches it in one hop; the budget is never
exceeded, and a shard with a backlog gets back the slots the idle shards offered. On a real
three-primary Valkey Cluster (tests/support/sharding.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest

import aqless
from tests.faults.cluster import Cluster
from tests.support.connection_kinds import Pops, settled
from tests.support.sharding import deployment, keys_of_a_shard
from tests.support.worker import Gate, Recorder, one, until

pytestmark = pytest.mark.timeout(60)
pytest_plugins = ["tests.support.sharding_fixtures"]

WORK = "app.Work"
SLOW_POLL = 30.0  # no poll comes during these tests: only pushes and put events bring jobs


@asynccontextmanager
async def working(worker: aqless.ShardedWorker) -> AsyncIterator[None]:
    async with anyio.create_task_group() as group:
        group.start_soon(worker.run)
        try:
            yield
        finally:
            worker.stop()
            worker.stop()


async def shards_offer(
    client: aqless.ShardedClient, worker: aqless.ShardedWorker, count: int = 3
) -> bool:
    """Whether (at least) `count` shards' workers have an offer standing on their shard."""
    found = 0
    for shard_id, member in worker.by_shard.items():
        shard = client.shard(shard_id)
        if await shard.redis.hget(f"{shard.prefix}offers:work", member.name) is not None:
            found += 1
    return found >= count


def completed(worker: aqless.ShardedWorker, count: int) -> bool:
    return worker.counters.completed == count


async def test_an_idle_sharded_worker_is_pushed_a_job_put_on_any_shard(cluster: Cluster) -> None:
    recorder = Recorder()
    async with deployment(cluster, "spushed") as client:
        worker = aqless.ShardedWorker(
            client, ["work"], handlers=one(recorder, WORK), concurrency=6, interval=SLOW_POLL
        )
        pops = {shard_id: Pops(client.shard(shard_id)) for shard_id in worker.by_shard}
        async with working(worker):
            await settled(list(pops.values()), lambda: shards_offer(client, worker))
            for shard_id in range(3):
                before = pops[shard_id].count
                route = keys_of_a_shard(client, shard_id)[0]
                jid = await client.queues["work"].put(WORK, {}, route=route)
                await until(lambda: jid in recorder.jids, timeout=3, what="the job runs")  # noqa: B023
                assert client.shard_of(jid) == shard_id
                assert pops[shard_id].count == before, "the job was pushed: no pop"
        assert worker.budget.overdrawn == 0


async def test_pushes_never_exceed_a_sharded_workers_slots(cluster: Cluster) -> None:
    gauge = Gate(0.1)
    async with deployment(cluster, "spushbudget") as client:
        worker = aqless.ShardedWorker(
            client, ["work"], handlers=one(gauge, WORK), concurrency=3, interval=SLOW_POLL
        )
        routes = [keys_of_a_shard(client, shard_id)[0] for shard_id in range(3)]
        async with working(worker):
            # 3 slots: two shards offer one each, one is kept for pops
            await until(lambda: shards_offer(client, worker, 2), what="the idle shards offer slots")
            jids = []
            # one at a time, across the shards: most to one (its worker pops while it may
            # be pushed more), now and then one to an idle shard (pushed at once)
            for shard_id in [0, 0, 0, 1, 0, 0, 0, 2] * 5:
                jids.append(await client.queues["work"].put(WORK, {}, route=routes[shard_id]))
                await anyio.sleep(0.01)
            await until(lambda: completed(worker, len(jids)), timeout=20, what="all done")
        assert gauge.most == 3
        assert worker.budget.overdrawn == 0


async def test_a_shard_with_a_backlog_gets_the_slots_the_idle_shards_offered(
    cluster: Cluster,
) -> None:
    gauge = Gate()
    async with deployment(cluster, "spushbacklog") as client:
        worker = aqless.ShardedWorker(
            client, ["work"], handlers=one(gauge, WORK), concurrency=4, interval=SLOW_POLL
        )
        async with working(worker):
            await until(lambda: shards_offer(client, worker), what="every shard offers")
            route = keys_of_a_shard(client, 0)[0]
            jids = await client.queues["work"].put_many(
                [aqless.PutRequest(WORK, {"n": n}) for n in range(12)], route=route
            )
            await until(lambda: gauge.inside == 4, timeout=5, what="every slot runs a job")
            await anyio.sleep(0.2)  # time to take a fifth, had the budget one
            assert gauge.most == 4
            gauge.open.set()
            await until(lambda: completed(worker, len(jids)), timeout=20, what="all done")
        busy, *idle = (member for _, member in sorted(worker.by_shard.items()))
        assert busy.counters.started == 12
        assert [member.counters.started for member in idle] == [0, 0]
        assert worker.budget.overdrawn == 0
