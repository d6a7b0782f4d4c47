"""Workflows on a sharded deployment: a workflow's record and its signals live in its job
hash, on its jid's shard; `ShardedClient.signal` finds that shard, and a `ShardedWorker`
runs the workflow there; the blocking client signals the same way."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

import aqless
import aqless.sync
from aqless import WorkflowContext
from aqless.sharding.members import is_shard
from aqless.workflows import record
from aqless.workflows.children import child_jid
from tests.faults.cluster import Cluster
from tests.support.sharding import addresses, deployment

pytestmark = pytest.mark.timeout(60)
pytest_plugins = ["tests.support.sharding_fixtures"]


async def test_a_sharded_workflow_is_signalled_on_its_shard(cluster: Cluster) -> None:
    handlers = aqless.Handlers()

    @handlers.workflow("wf.Approve")
    async def approve(ctx: WorkflowContext) -> Any:
        await ctx.sleep(0.2)
        return [await ctx.wait_for("yes"), await ctx.wait_for("yes")]

    async with deployment(cluster, "workflows") as client:
        jids = await client.queues["q"].put_many(
            [aqless.PutRequest("wf.Approve", {}) for _ in range(6)]
        )
        assert len({client.shard_of(jid) for jid in jids}) > 1  # spread over the shards
        for jid in jids:  # kept before any wait, and taken once
            assert await client.signal(jid, "yes", 1, signal_id="first") == "kept"
            assert await client.signal(jid, "yes", 1, signal_id="first") == "duplicate"
        worker = aqless.ShardedWorker(client, ["q"], handlers=handlers, interval=0.1)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(worker.run)

            async def parked(jid: str) -> bool:
                job = await client.jobs.get(jid)
                assert isinstance(job, aqless.Job)
                why = record.parked(job.state, job.data)
                return why is not None and why.kind == "signal"

            with anyio.fail_after(20):
                for jid in jids:
                    while not await parked(jid):  # noqa: ASYNC110  # a test's polling
                        await anyio.sleep(0.05)
            blocking = aqless.sync.ShardedClient(addresses(cluster), deployment="workflows")
            try:
                for jid in jids[:3]:
                    await anyio.to_thread.run_sync(blocking.signal, jid, "yes", 2)
            finally:
                blocking.close()
            for jid in jids[3:]:
                await client.signal(jid, "yes", 2)
            for jid in jids:
                assert await client.result(jid, timeout=10) == [1, 2]
            worker.stop()


async def test_a_sharded_workflow_s_children_live_and_are_found_on_its_shard(
    cluster: Cluster,
) -> None:
    handlers = aqless.Handlers()

    @handlers.workflow("wf.Fan")
    async def fan(ctx: WorkflowContext) -> int:
        kids = [await ctx.child("wf.Double", {"n": n}, queue="kids") for n in range(3)]
        return sum(await ctx.gather(*kids))

    @handlers.register("wf.Double")
    async def double(job: aqless.Job) -> int:
        return 2 * int(job.data["n"])

    async with deployment(cluster, "workflow-children") as client:
        jids = await client.queues["fan"].put_many(
            [aqless.PutRequest("wf.Fan", {}) for _ in range(4)]
        )
        assert len({client.shard_of(jid) for jid in jids}) > 1
        worker = aqless.ShardedWorker(client, ["fan", "kids"], handlers=handlers, interval=0.1)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(worker.run)
            for jid in jids:
                assert await client.result(jid, timeout=15) == 0 + 2 + 4
            worker.stop()
        assert all(is_shard(shard) for shard in client.clients)  # its shards' clients
        for jid in jids:
            job = await client.jobs.get(jid)
            assert isinstance(job, aqless.Job)
            started = job.data[record.KEY]["children"]
            kids = [kid["jid"] for kid in started.values()]
            # the sharded jid: the same name gives it on every run, in the workflow's bucket
            assert kids == [child_jid(jid, name, sharded=True) for name in started]
            for kid in kids:  # a lookup by jid finds each child, on its workflow's shard
                assert client.shard_of(kid) == client.shard_of(jid)
                assert await client.result(kid, timeout=1) in (0, 2, 4)


async def test_a_sharded_workflow_races_its_children_on_its_shard(cluster: Cluster) -> None:
    handlers = aqless.Handlers()

    @handlers.workflow("wf.Race")
    async def race(ctx: WorkflowContext) -> list[Any]:
        slow = await ctx.child("wf.Wait", {"s": 30}, queue="kids", name="slow")
        fast = await ctx.child("wf.Wait", {"s": 0}, queue="kids", name="fast")
        winner, result = await ctx.first(slow, fast, cancel=True)
        return [winner.name, result]

    @handlers.register("wf.Wait")
    async def wait(job: aqless.Job) -> int:
        await anyio.sleep(float(job.data["s"]))
        return int(job.data["s"])

    async with deployment(cluster, "workflow-races") as client:
        jids = await client.queues["race"].put_many(
            [aqless.PutRequest("wf.Race", {}) for _ in range(4)]
        )
        worker = aqless.ShardedWorker(
            client, ["race", "kids"], handlers=handlers, concurrency=12, interval=0.1
        )
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(worker.run)
            for jid in jids:
                assert await client.result(jid, timeout=15) == ["fast", 0]
            worker.stop()
        for jid in jids:  # each loser cancelled, found (gone) where a lookup asks
            assert await client.jobs.get(child_jid(jid, "slow", sharded=True)) is None
            assert await client.result(child_jid(jid, "fast", sharded=True), timeout=1) == 0
