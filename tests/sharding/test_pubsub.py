"""Sharded pub/sub on a real three-primary Valkey Cluster (tests/support/sharding_fixtures.py): a
shard's script SPUBLISHes, heard on its slot's primary only; the merged event stream and a
ShardedWorker listen with SSUBSCRIBE there; the merged stream follows the map."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import anyio
import pytest
import redis.asyncio as aioredis
from redis.crc import key_slot

import aqless
from aqless.events import RECONNECTED, Event
from aqless.sharding.pubsub import OPTION, SHARDED
from tests.faults.cluster import Cluster, move_slot
from tests.support.sharding import addresses, deployment, home_port, keys_of_a_shard
from tests.support.worker import Recorder, one
from tests.support.worker_processes import eventually

pytestmark = pytest.mark.timeout(60)
pytest_plugins = ["tests.support.sharding_fixtures"]

WORK = "app.Work"
SENTINEL = "aqless-test-sentinel"


def node(port: int) -> aioredis.Redis:
    """A plain connection to one node of the cluster."""
    return aioredis.Redis(host="127.0.0.1", port=port, decode_responses=True)


@asynccontextmanager
async def heard(
    port: int, channels: Sequence[str], *, sharded: bool
) -> AsyncIterator[list[tuple[str, str]]]:
    """The (channel, payload) pairs SUBSCRIBE (or SSUBSCRIBE) on the node at `port` hears
    on `channels` while the block runs (until a sentinel published at its end arrives)."""
    connection = node(port)
    pubsub = connection.pubsub()
    messages: list[tuple[str, str]] = []
    try:
        if sharded:
            await pubsub.ssubscribe(*channels)
        else:
            await pubsub.subscribe(*channels)
        await pubsub.subscribe(SENTINEL)
        for _ in range(len(channels) + 1):
            assert await pubsub.get_message(timeout=5) is not None  # the confirmations
        yield messages
        await connection.publish(SENTINEL, "end")  # after the block's publications
        while True:
            message = await pubsub.get_message(timeout=5)
            assert message is not None, "the sentinel never arrived"
            if message["channel"] == SENTINEL:
                break
            messages.append((message["channel"], message["data"]))
    finally:
        await pubsub.aclose()  # type: ignore[no-untyped-call, unused-ignore]
        await connection.aclose()


async def test_each_shard_spublishes_heard_on_its_primary_only(cluster: Cluster) -> None:
    async with deployment(cluster, "spub") as client:
        assert all(shard.sharded_pubsub for shard in client.clients)
        for shard in client.shards.shards:
            assert await client.shard(shard.id).config.get(OPTION) == SHARDED
        queue = client.queues["work"]
        zero = client.shards.shards[0].namespace
        log = f"{zero}:ql:log"
        home = home_port(cluster, zero)
        elsewhere = next(port for port in cluster.ports if port != home)
        async with (
            client.events("log") as events,
            heard(home, [log], sharded=True) as on_home,
            heard(elsewhere, [log], sharded=False) as broadcast,
            heard(home, [log], sharded=False) as plain_on_home,
        ):
            jids = [
                await queue.put(WORK, {}, route=keys_of_a_shard(client, shard)[0])
                for shard in range(3)
            ]
            puts: list[Event] = []
            with anyio.fail_after(10):
                async for event in events:
                    if event.kind == "put":
                        puts.append(event)
                    if len(puts) == 3:
                        break
        assert sorted(event.jid or "" for event in puts) == sorted(jids)
        assert {event.channel for event in puts} == {
            f"{shard.namespace}:ql:log" for shard in client.shards.shards
        }
        assert [payload for _, payload in on_home] == [puts_raw(puts, jids[0])]
        assert broadcast == []  # no node but the shard's hears it: nothing is broadcast
        assert plain_on_home == []


def puts_raw(events: Sequence[Event], jid: str) -> str:
    return next(event.raw for event in events if event.jid == jid)


async def test_a_sharded_worker_is_woken_by_put_events_on_every_shard(cluster: Cluster) -> None:
    recorder = Recorder()
    async with deployment(cluster, "swake") as client:
        queue = client.queues["work"]
        worker = aqless.ShardedWorker(
            client, ["work"], handlers=one(recorder, WORK), concurrency=3, interval=600
        )
        with anyio.fail_after(30):
            async with anyio.create_task_group() as running:
                running.start_soon(worker.run)
                await eventually(
                    lambda: all(member.listening for member in worker.workers),
                    what="every shard's worker listens",
                )
                for shard in client.shards.shards:  # on its primary, by SSUBSCRIBE
                    connection = node(home_port(cluster, shard.namespace))
                    log = f"{shard.namespace}:ql:log"
                    counts = await connection.execute_command("PUBSUB", "SHARDNUMSUB", log)  # type: ignore[no-untyped-call]
                    assert counts == [log, 1]
                    assert await connection.execute_command("PUBSUB", "NUMSUB", log) == [log, 0]  # type: ignore[no-untyped-call]
                    await connection.aclose()
                # with a 600 s interval only the put events can wake the shards' workers
                jids = [
                    await queue.put(WORK, {}, route=keys_of_a_shard(client, shard)[0])
                    for shard in range(3)
                ]
                await eventually(lambda: len(recorder.jids) == 3, what="every job done")
                worker.stop()
        assert sorted(recorder.jids) == sorted(jids)
        assert {client.shard_of(jid) for jid in jids} == {0, 1, 2}


async def test_the_merged_stream_follows_shards_added_and_forgotten(cluster: Cluster) -> None:
    async with (
        deployment(cluster, "sfollow", shards=2, refresh=0.2) as client,
        deployment(cluster, "sfollow", shards=None) as admin,
        client.events("log") as events,
    ):
        assert len(events.channels) == 2
        grown = await admin.add_shards(1)  # another client: this one's timer reads it
        new = grown.shards[-1]
        assert await admin.shard(new.id).config.get(OPTION) == SHARDED
        await eventually(lambda: len(events.channels) == 3, what="the new shard heard")
        assert f"{new.namespace}:ql:log" in events.channels
        assert client.shard(new.id).sharded_pubsub
        jid = await client.queues["work"].put(WORK, {}, route=keys_of_a_shard(client, new.id)[0])
        assert client.shard_of(jid) == new.id
        with anyio.fail_after(10):
            async for event in events:
                if event.kind == "put" and event.jid == jid:
                    break
        job = await client.jobs.get(jid)
        assert job is not None
        await job.cancel()
        await admin.remove_shard(new.id)
        await admin.forget_shard(new.id, grace=0)
        await eventually(lambda: len(events.channels) == 2, what="the forgotten shard left")
        assert f"{new.namespace}:ql:log" not in events.channels
        grown_here = await client.add_shards(1)  # this client: heard at once
        newest = grown_here.shards[-1]
        await eventually(lambda: len(events.channels) == 3, timeout=0.15, what="heard at once")
        assert f"{newest.namespace}:ql:log" in events.channels


async def test_a_client_of_one_shard_opened_by_hand_hears_it(cluster: Cluster) -> None:
    async with deployment(cluster, "shand") as client:
        namespace = client.shards.shards[1].namespace
        async with aqless.Client.from_cluster(
            addresses(cluster), namespace=namespace, sharded_pubsub=True
        ) as shard:
            assert shard.sharded_pubsub
            async with shard.events("log") as events:
                jid = await shard.queues["work"].put(WORK, {})
                with anyio.fail_after(10):
                    event = await anext(events)
        assert (event.kind, event.jid, event.channel) == ("put", jid, f"{namespace}:ql:log")


async def test_the_merged_stream_hears_a_shard_again_after_its_slot_moves(
    cluster: Cluster,
) -> None:
    """Moving a shard's slot to another primary makes the old one unsubscribe the shard's
    channels (``sunsubscribe``): the shard's stream resubscribes where the slot is now,
    and the merged stream hears its events again."""
    async with deployment(cluster, "smove") as client:
        shard = client.shards.shard(1)
        channel = f"{shard.namespace}:ql:log"
        slot = key_slot(f"{shard.namespace}:ql:".encode())
        source = home_port(cluster, shard.namespace)
        target = next(port for port in cluster.ports if port != source)
        async with client.events("log") as events:
            move_slot(cluster, slot, source, target)
            try:
                with anyio.fail_after(30):
                    async for event in events:
                        if event.kind == RECONNECTED:
                            break
                    route = keys_of_a_shard(client, shard.id)[0]
                    jid = await client.queues["work"].put(WORK, {}, route=route)
                    async for event in events:
                        if event.kind == "put" and event.jid == jid:
                            break
                assert event.channel == channel
                moved = node(target)
                try:
                    listeners = await moved.pubsub_shardnumsub(channel)
                finally:
                    await moved.aclose()
                assert listeners == [(channel, 1)]
            finally:
                move_slot(cluster, slot, target, source)
