"""Flows on a sharded deployment (a real three-primary Valkey Cluster): a flow lives on the
shard its root's jid places it on, every job of it findable there; a flow that names what
another shard owns is refused with FlowPlacementError before anything is written."""

from __future__ import annotations

import uuid

import pytest

import aqless
from aqless.errors import FlowPlacementError
from aqless.flows import FlowNode
from aqless.sharding.placement import group_key
from tests.faults.cluster import Cluster
from tests.support.sharding import deployment, keys_of_a_shard

pytestmark = pytest.mark.timeout(60)
pytest_plugins = ["tests.support.sharding_fixtures"]


async def test_a_flow_lives_on_its_root_s_shard(cluster: Cluster) -> None:
    async with deployment(cluster, f"flows-{uuid.uuid4().hex[:6]}") as client:
        root = keys_of_a_shard(client, 2, "root-")[0]
        children = [FlowNode("app.Leaf", {"i": i}, queue="q", name=f"c{i}") for i in range(6)]
        flow = await client.flows.put(FlowNode("app.Sum", queue="q", jid=root), children)
        assert flow.root == root
        for jid in flow.jids:
            assert await client.shard_of_jid(jid) == 2
            assert await client.shard(2).jobs.get(jid) is not None
        tree = await client.flows.tree(flow.jids[3])
        assert tree is not None
        assert tree.jid == root
        assert [child.name for child in tree.children] == [f"c{i}" for i in range(6)]
        job = await client.jobs.get(root)
        assert isinstance(job, aqless.Job)
        assert job.state == aqless.JobState.DEPENDS
        assert len(await job.children_results()) == 6
        chain = await client.flows.chain([FlowNode("app.Step", queue="q") for _ in range(3)])
        shards = {await client.shard_of_jid(jid) for jid in chain.jids}
        assert len(shards) == 1


async def test_a_flow_naming_another_shard_s_jid_is_refused(cluster: Cluster) -> None:
    async with deployment(cluster, f"flows-{uuid.uuid4().hex[:6]}") as client:
        root = keys_of_a_shard(client, 0, "root-")[0]
        elsewhere = keys_of_a_shard(client, 1, "child-")[0]
        with pytest.raises(FlowPlacementError, match=f"job {elsewhere}"):
            await client.flows.put(
                FlowNode("app.Sum", queue="q", jid=root),
                [FlowNode("app.Leaf", queue="q", jid=elsewhere)],
            )
        assert await client.jobs.get(root) is None
        assert await client.jobs.get(elsewhere) is None


async def test_a_flow_s_group_or_dependency_on_another_shard_is_refused(
    cluster: Cluster,
) -> None:
    async with deployment(cluster, f"flows-{uuid.uuid4().hex[:6]}") as client:
        root = keys_of_a_shard(client, 0, "root-")[0]
        shard_map = await client.current_map()
        group = next(
            name
            for name in (f"tenant-{i}" for i in range(1000))
            if shard_map.keeper(group_key("q", name)) != 0
        )
        with pytest.raises(FlowPlacementError, match=f"group '{group}'"):
            await client.flows.put(
                FlowNode("app.Sum", queue="q", jid=root),
                [FlowNode("app.Leaf", queue="q", group=group)],
            )
        outside = await client.queues["q"].put("app.Leaf", jid=keys_of_a_shard(client, 1, "o-")[0])
        with pytest.raises(FlowPlacementError, match=f"dependency '{outside}'"):
            await client.flows.put(FlowNode("app.Sum", queue="q", jid=root, depends=[outside]))
        assert await client.jobs.get(root) is None


async def test_cancelling_a_sharded_flow_s_root_removes_the_flow(cluster: Cluster) -> None:
    async with deployment(cluster, f"flows-{uuid.uuid4().hex[:6]}") as client:
        root = keys_of_a_shard(client, 1, "root-")[0]
        children = [FlowNode("app.Leaf", queue="q") for _ in range(3)]
        flow = await client.flows.put(FlowNode("app.Sum", queue="q", jid=root), children)
        popped = await client.shard(1).queues["q"].pop()
        assert popped is not None
        with pytest.raises(aqless.FlowRunningError):
            await client.jobs.cancel(root)
        await popped.complete()
        assert await client.jobs.cancel(root) == list(flow.jids)
        assert [await client.jobs.get(jid) for jid in flow.jids] == [None] * 4
