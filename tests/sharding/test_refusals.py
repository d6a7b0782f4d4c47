"""A shard that refuses while the others serve, on a real three-primary Valkey Cluster
(tests/support/sharding_fixtures.py): a full shard (``maxmemory 1`` on its primary: OOM) or one
whose ACL refuses the event channels. A sharded pop loses none of the jobs the other
shards popped (PartialPopError hands them over), and every call fanned out to the shards
(put_many, the merged event stream, ShardedWorker) raises the shard's own typed error,
never anyio's ExceptionGroup."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

import anyio
import pytest

import aqless
import aqless.sync
from aqless.puts import PutSender
from tests.faults.cluster import Cluster
from tests.faults.harness import ask
from tests.support.sharding import addresses, deployment, home_port, key_per_shard

pytestmark = pytest.mark.timeout(60)
pytest_plugins = ["tests.support.sharding_fixtures"]

WORK = "app.Work"
USER, PASSWORD = "hearer", "hearer-secret"


@contextmanager
def full(port: int) -> Iterator[None]:
    """Inside, the primary at `port` refuses writes (OOM)."""
    ask(port, "CONFIG", "SET", "maxmemory", "1")
    try:
        yield
    finally:
        ask(port, "CONFIG", "SET", "maxmemory", "0")


def shard_port(cluster: Cluster, client: aqless.ShardedClient, shard: int) -> int:
    return home_port(cluster, client.shards.shard(shard).namespace)


async def test_a_pop_one_full_shard_refuses_hands_over_what_the_others_popped(
    cluster: Cluster,
) -> None:
    async with deployment(cluster, "fullpop") as client:
        queue = client.queues["work"]
        for route in key_per_shard(client):
            await queue.put_many([aqless.PutRequest(WORK, {}) for _ in range(2)], route=route)
        with full(shard_port(cluster, client, 0)), pytest.raises(aqless.PartialPopError) as caught:
            await queue.pop_many(6, worker="w")
        partial = caught.value
        assert partial.shard == 0
        assert isinstance(partial.error, aqless.ServerFullError)
        assert partial.error.condition == "OOM"
        assert partial.__cause__ is partial.error
        assert not isinstance(partial, aqless.ConnectionLostError)  # no retry drops them
        assert len(partial.jobs) == 4
        assert {client.shard_of(job.jid) for job in partial.jobs} == {1, 2}
        for job in partial.jobs:  # held by the worker that popped them: run at once
            await job.complete()
        counts = await queue.counts()
        assert (counts.waiting, counts.running) == (2, 0)  # shard 0's, untouched

        # nothing popped elsewhere: the shard's own error, as a plain pop raises it
        with full(shard_port(cluster, client, 0)), pytest.raises(aqless.ServerFullError):
            await queue.pop_many(6, worker="w")
        assert len(await queue.pop_many(6, worker="w")) == 2


def test_a_blocking_partial_pop_hands_over_sync_jobs(cluster: Cluster) -> None:
    """aqless.sync's sharded pop_many raises the same PartialPopError, its jobs SyncJobs
    whose verbs block like those of the jobs it returns."""
    name = f"syncpop{uuid.uuid4().hex[:6]}"
    with aqless.sync.ShardedClient(addresses(cluster), deployment=name, shards=3) as client:
        queue = client.queues["work"]
        for shard in range(3):
            route = next(f"r{n}" for n in range(999) if client.shard_of(f"r{n}") == shard)
            queue.put_many([aqless.PutRequest(WORK, {}) for _ in range(2)], route=route)

        async def first_namespace(sharded: aqless.ShardedClient) -> str:
            return sharded.shards.shard(0).namespace

        namespace = client.call(first_namespace)
        with full(home_port(cluster, namespace)), pytest.raises(aqless.PartialPopError) as caught:
            queue.pop_many(6, worker="w")
        jobs = caught.value.jobs
        assert len(jobs) == 4
        assert all(isinstance(job, aqless.sync.SyncJob) for job in jobs)
        for job in jobs:
            assert job.complete() == aqless.JobState.COMPLETE
        assert queue.counts().waiting == 2


async def test_a_put_many_one_full_shard_refuses_is_its_typed_error(cluster: Cluster) -> None:
    async with deployment(cluster, "fullputs") as client:
        queue = client.queues["work"]
        requests = [aqless.PutRequest(WORK, {"n": n}) for n in range(30)]
        with full(shard_port(cluster, client, 1)), pytest.raises(aqless.ServerFullError) as caught:
            await queue.put_many(requests)
        assert caught.value.condition == "OOM"
        counts = await client.shard(1).queues["work"].counts()
        assert counts.waiting == 0
        others = [await client.shard(k).queues["work"].length() for k in (0, 2)]
        assert all(others)  # every other shard's share was put
        assert sum(others) < len(requests)


async def test_a_put_hook_failing_on_one_shard_raises_its_own_error(cluster: Cluster) -> None:
    async with deployment(cluster, "hookputs") as client:

        async def refuse(
            queue: aqless.Queue, requests: list[aqless.PutRequest], send: PutSender
        ) -> list[str]:
            raise RuntimeError("no puts here")

        client.shard(2).put_hooks.append(refuse)
        requests = [aqless.PutRequest(WORK, {"n": n}) for n in range(30)]
        with pytest.raises(RuntimeError, match="no puts here"):
            await client.queues["work"].put_many(requests)


@contextmanager
def listener_user(cluster: Cluster) -> Iterator[None]:
    """An ACL user that may do anything, on every node, while the block runs."""
    for port in cluster.ports:
        ask(port, "ACL", "SETUSER", USER, "on", f">{PASSWORD}", "~*", "&*", "+@all")
    try:
        yield
    finally:
        for port in cluster.ports:
            ask(port, "ACL", "DELUSER", USER)


@asynccontextmanager
async def as_listener(cluster: Cluster, name: str) -> AsyncIterator[aqless.ShardedClient]:
    with listener_user(cluster):
        async with deployment(cluster, name, username=USER, password=PASSWORD) as client:
            yield client


def refuse_channels(port: int) -> None:
    """The node at `port` no longer lets the user hear any channel; its subscriptions
    there are dropped."""
    ask(port, "ACL", "SETUSER", USER, "resetchannels")
    ask(port, "CLIENT", "KILL", "USER", USER)


async def test_a_shard_refusing_the_merged_streams_resubscription_is_its_typed_error(
    cluster: Cluster,
) -> None:
    async with as_listener(cluster, "aclstream") as client, client.events("log") as events:
        refuse_channels(shard_port(cluster, client, 1))
        with anyio.fail_after(20), pytest.raises(aqless.PermissionDeniedError):
            async for _ in events:
                pass


async def test_a_shard_refusing_its_workers_channel_is_its_typed_error(cluster: Cluster) -> None:
    async with as_listener(cluster, "aclworker") as client:
        ask(shard_port(cluster, client, 2), "ACL", "SETUSER", USER, "resetchannels")
        worker = aqless.ShardedWorker(client, ["work"], handlers=aqless.Handlers(), burst=True)
        with anyio.fail_after(20), pytest.raises(aqless.PermissionDeniedError):
            await worker.run()
