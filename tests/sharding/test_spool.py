"""A sharded deployment's spool (aqless.sharding.spool): with two shards, one shard's primary
SIGKILLed and started again while puts go on, the puts placed on it are kept and sent once it
answers, each once and in the order they were made, while the puts placed on the other shard
go straight to it; a spool file outlives its producer; the blocking sharded client's spool.

The cluster is the module's own (its primaries are killed), with
``cluster-require-full-coverage no``, so that the shard left answers while the other is
away (otherwise the Cluster refuses every slot once a primary is lost)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import anyio
import pytest
import redis

import aqless
import aqless.sync
from aqless._concurrency.backoff import Delays
from aqless.puts import PutSender
from aqless.sharding.client import ShardedClient
from aqless.sharding.queue import ShardedQueue
from tests.faults.cluster import Cluster, valkey_cluster
from tests.faults.harness import ask, until
from tests.support.sharding import (
    addresses,
    deployment,
    home_port,
    keys_of_a_shard,
    run_docs_snippet,
)

pytestmark = [pytest.mark.faults, pytest.mark.timeout(120)]

QUEUE = "spooled-orders"
FAST = Delays(0.05, 0.2)  # a flush finding no shard tries again soon


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with valkey_cluster() as running:
        for port in running.ports:
            ask(port, "CONFIG", "SET", "cluster-require-full-coverage", "no")
        yield running


def kill_shard(cluster: Cluster, namespace: str) -> tuple[int, int]:
    """SIGKILL the primary holding `namespace` (its data saved first, so that it comes back
    with the jobs it had); its port and cluster bus port."""
    port = home_port(cluster, namespace)
    reply = ask(port, "CONFIG", "GET", "cluster-port")
    bus = int(reply["cluster-port"] if isinstance(reply, dict) else reply[1])  # type: ignore[index]
    ask(port, "SAVE")
    cluster.kill(port)
    return port, bus


def restart(cluster: Cluster, port: int, bus: int) -> None:
    """Start the killed primary again on its port, data and cluster configuration."""
    cluster.start(port, bus, "--cluster-require-full-coverage", "no")
    until(lambda: "cluster_state:ok" in str(ask(port, "CLUSTER", "INFO")), f"node {port} back")


async def flushed(spool: aqless.Spool, timeout: float = 30) -> None:
    with anyio.fail_after(timeout):
        while spool.depth:  # noqa: ASYNC110  # the client's task flushes it
            await anyio.sleep(0.02)


async def waiting(client: ShardedClient, shard: int, queue: str = QUEUE) -> list[str]:
    """The queue's waiting jobs on one shard, in the order a pop takes them (read again
    when a connection made before the restart is found closed)."""
    plain = client.shard(shard)
    for _ in range(20):
        try:
            jids = await plain.redis.zrevrange(f"{plain.prefix}q:{queue}-work", 0, -1)
            return [str(jid) for jid in jids]
        except redis.ConnectionError:
            await anyio.sleep(0.1)
    raise AssertionError(f"shard {shard} cannot be read")


async def test_a_shard_away_has_its_puts_spooled_and_sent_once_in_order(cluster: Cluster) -> None:
    async with deployment(cluster, "spool-two", shards=2) as client:
        spool = client.spool(capacity=100)
        spool.retry = FAST
        routes = [keys_of_a_shard(client, shard, "customer-")[0] for shard in (0, 1)]
        made: list[tuple[int, aqless.PutReceipt]] = []

        async def put(n: int) -> aqless.PutReceipt:
            shard = n % 2
            receipt = await spool.put(QUEUE, "tasks.Send", n, route=routes[shard])
            made.append((shard, receipt))
            return receipt

        assert all([(await put(n)).queued for n in range(10)])
        port, bus = kill_shard(cluster, client.shards.shard(1).namespace)
        during = [await put(n) for n in range(10, 30)]
        assert all(receipt.queued for receipt in during[0::2])  # the live shard: at once
        assert all(receipt.spooled for receipt in during[1::2])
        assert spool.depth == 10
        await anyio.to_thread.run_sync(restart, cluster, port, bus)
        after = [await put(n) for n in range(30, 40)]
        await flushed(spool)
        assert all(receipt.queued for receipt in after[0::2])
        for shard in (0, 1):
            assert await waiting(client, shard) == [r.jid for s, r in made if s == shard]
        jobs = await client.jobs.get_many([receipt.jid for _, receipt in made])
        assert [job.data for job in jobs] == list(range(40))
        stats = spool.stats()
        assert stats.spooled >= 10
        assert (stats.depth, stats.flushed, stats.dropped) == (0, stats.spooled, 0)


async def test_a_sharded_file_spool_outlives_its_producer_and_a_forgotten_shard(
    cluster: Cluster, tmp_path: Path
) -> None:
    path = tmp_path / "sharded.spool"
    async with deployment(cluster, "spool-file", shards=2) as client:
        spool = client.spool(path=path)
        spool.retry = FAST
        away, live = (keys_of_a_shard(client, shard, "file-")[0] for shard in (1, 0))
        port, bus = kill_shard(cluster, client.shards.shard(1).namespace)
        kept = [await spool.put(QUEUE, "tasks.Send", n, route=away) for n in range(5)]
        assert all(receipt.spooled for receipt in kept)
        assert (await spool.put(QUEUE, "tasks.Send", 99, route=live)).queued
    # the producer is gone; its closing flush could not reach shard 1
    lines = path.read_bytes().splitlines()
    assert [json.loads(line)["s"] for line in lines] == [1] * 5
    # the last two as if kept for a shard forgotten since: sent to their jid's shard now
    moved = [json.dumps({**json.loads(line), "s": 7}).encode() for line in lines[3:]]
    path.write_bytes(b"\n".join([*lines[:3], *moved]) + b"\n")
    await anyio.to_thread.run_sync(restart, cluster, port, bus)
    async with deployment(cluster, "spool-file", shards=None) as client:
        spool = client.spool(path=path)
        assert spool.depth == 5
        await flushed(spool)
        assert await waiting(client, 1) == [receipt.jid for receipt in kept]
        jobs = await client.jobs.get_many([receipt.jid for receipt in kept])
        assert [job.data for job in jobs] == list(range(5))
    assert path.read_bytes() == b""


async def test_the_put_hooks_wrap_a_sharded_spooled_put_once(cluster: Cluster) -> None:
    """A hook sees the ShardedQueue once, before the put is placed, whether the put is sent
    or kept; the job keeps what it wrote. A closed client's spool refuses puts."""
    seen: list[str] = []

    async def stamp(
        queue: ShardedQueue, requests: list[aqless.PutRequest], send: PutSender
    ) -> list[str]:
        seen.append(type(queue).__name__)
        return await send([replace(r, data={**r.data, "stamped": True}) for r in requests])

    async with deployment(cluster, "spool-hooks", shards=2) as client:
        client.put_hooks.append(stamp)
        spool = client.spool()
        spool.retry = FAST
        route = keys_of_a_shard(client, 1, "hook-")[0]
        port, bus = kill_shard(cluster, client.shards.shard(1).namespace)
        receipt = await spool.put(QUEUE, "tasks.Send", {"n": 1}, route=route)
        assert receipt.spooled
        await anyio.to_thread.run_sync(restart, cluster, port, bus)
        await flushed(spool)
        job = await client.jobs.get(receipt.jid)
        assert isinstance(job, aqless.Job)
        assert job.data == {"n": 1, "stamped": True}
        assert seen == ["ShardedQueue"]
    with pytest.raises(aqless.ClientClosedError):
        await spool.put(QUEUE, "tasks.Send", {"n": 2}, route=route)


def test_a_blocking_sharded_client_s_spool(cluster: Cluster) -> None:
    with aqless.sync.ShardedClient(addresses(cluster), deployment="spool-sync", shards=2) as client:
        spool = client.spool(capacity=20)

        async def namespace(async_client: ShardedClient) -> str:
            return async_client.shards.shard(1).namespace

        route = {client.shard_of(key): key for key in (f"sync-{n}" for n in range(50))}
        port, bus = kill_shard(cluster, client.call(namespace))
        kept = [spool.put(QUEUE, "tasks.Send", n, route=route[1]) for n in range(3)]
        assert all(receipt.spooled for receipt in kept)
        assert spool.put(QUEUE, "tasks.Send", 9, route=route[0]).queued
        assert spool.depth == 3
        restart(cluster, port, bus)
        until(lambda: spool.flush(timeout=10) >= 0 and spool.depth == 0, "the spool flushed")
        assert spool.stats().flushed == 3
        jobs = client.jobs.get_many([receipt.jid for receipt in kept])
        assert [job.data for job in jobs] == [0, 1, 2]


def test_the_outage_guide_s_sharded_example_runs(cluster: Cluster) -> None:
    result = run_docs_snippet(cluster, "tests/sharding/test_spool.py")
    assert result.returncode == 0, result.stderr
    jid, outcome, *shard = result.stdout.split()
    assert len(jid) == 32
    assert (outcome, shard[:2]) == ("queued", ["for", "shard"])
