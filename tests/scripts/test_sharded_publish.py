"""Sharded pub/sub (aqless.sharding.pubsub): with ``ql:config`` ``aqless-pubsub`` = ``sharded``
the script publishes with SPUBLISH, heard by SSUBSCRIBE and not by SUBSCRIBE; without it,
with PUBLISH as before (tests/scripts/test_differential.py holds the bytes). A plain server
has shard channels too, so this runs on both servers without a Cluster."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import anyio
import redis.asyncio as aioredis

import aqless
from aqless.sharding.pubsub import OPTION, SHARDED
from tests.conftest import Captured, Lua
from tests.scripts._relations_helpers import EventsFactory

SENTINEL = "ql:aqless-test-sentinel"
PUT = '{"jid":"jid","event":"put","queue":"queue"}'


@asynccontextmanager
async def sharded_listener(
    redis: aioredis.Redis, channels: Sequence[str]
) -> AsyncIterator[Captured]:
    """What SSUBSCRIBE hears on `channels` while the block runs (read until a sentinel
    SPUBLISHed after it arrives: one connection's messages come in order)."""
    pubsub = redis.pubsub()
    captured = Captured()
    try:
        await pubsub.ssubscribe(*channels, SENTINEL)
        for _ in range(len(channels) + 1):
            confirmation = await pubsub.get_message(timeout=5)
            assert confirmation is not None
            assert confirmation["type"] == "ssubscribe"
        yield captured
        await redis.execute_command("SPUBLISH", SENTINEL, "end")  # type: ignore[no-untyped-call]
        while True:
            message = await pubsub.get_message(timeout=5)
            assert message is not None, "the sentinel never arrived"
            if message["channel"] == SENTINEL:
                break
            if message["type"] == "smessage":
                captured.messages.append((message["channel"], message["data"]))
    finally:
        await pubsub.aclose()  # type: ignore[no-untyped-call, unused-ignore]


async def test_a_sharded_namespace_spublishes_every_event(
    redis: aioredis.Redis, lua: Lua, events: EventsFactory
) -> None:
    assert await redis.hset("ql:config", OPTION, SHARDED) == 1
    channels = ("ql:log", "ql:track", "ql:completed")
    async with events() as plain, sharded_listener(redis, channels) as sharded:
        await lua("put", 0, "worker", "queue", "jid", "cls", "{}", 0)
        await lua("track", 1, "track", "jid")
        await lua("pop", 2, "queue", "worker", 1)
        await lua("complete", 3, "jid", "worker", "queue", "{}")
    assert plain.messages == []
    assert sharded.messages == [
        ("ql:log", PUT),
        ("ql:track", "jid"),
        ("ql:completed", "jid"),
        ("ql:log", '{"jid":"jid","event":"completed","queue":"queue"}'),
    ]


async def test_without_the_option_the_script_publishes_as_before(
    redis: aioredis.Redis, lua: Lua, events: EventsFactory
) -> None:
    await redis.hset("ql:config", "heartbeat", "30")  # other options change nothing
    async with events() as plain, sharded_listener(redis, ("ql:log",)) as sharded:
        await lua("put", 0, "worker", "queue", "jid", "cls", "{}", 0)
    assert plain.messages == [("ql:log", PUT)]
    assert sharded.messages == []


async def test_the_option_set_through_the_protocol_takes_effect_at_once(
    redis: aioredis.Redis, lua: Lua, events: EventsFactory
) -> None:
    async with events() as plain, sharded_listener(redis, ("ql:log",)) as sharded:
        await lua("config.set", 0, OPTION, SHARDED)
        await lua("put", 1, "worker", "queue", "jid", "cls", "{}", 0)
        await lua("config.unset", 2, OPTION)
        await lua("put", 3, "worker", "queue", "jid2", "cls", "{}", 0)
    set_event = '{"option":"aqless-pubsub","event":"config_set","value":"sharded"}'
    unset_event = '{"event":"config_unset","option":"aqless-pubsub"}'
    # the change itself is announced as the namespace published before it (then it is made)
    assert sharded.messages == [("ql:log", PUT), ("ql:log", unset_event)]
    jid2_put = '{"jid":"jid2","event":"put","queue":"queue"}'
    assert plain.messages == [("ql:log", set_event), ("ql:log", jid2_put)]


async def test_a_sharded_clients_streams_hear_a_sharded_namespace(
    redis: aioredis.Redis, server_url: str
) -> None:
    await redis.hset("ql:config", OPTION, SHARDED)
    async with (
        aqless.Client(server_url, sharded_pubsub=True) as client,
        aqless.Client(server_url) as plain,
    ):
        queue = client.queues["queue"]
        async with client.events("log") as events, plain.events("log") as unheard:
            jid = await queue.put("app.Work", {})
            with anyio.fail_after(5):
                event = await anext(events)
            assert (event.kind, event.jid, event.channel) == ("put", jid, "ql:log")
            with anyio.move_on_after(0.2):  # the plain stream hears nothing of it
                await anext(unheard)
                raise AssertionError("a SUBSCRIBE heard a sharded namespace's event")
        job = await queue.pop()
        assert job is not None
        async with anyio.create_task_group() as tasks:
            done: list[aqless.JobState | None] = []

            async def wait() -> None:
                done.append(await client.wait(jid, timeout=5))

            tasks.start_soon(wait)
            await job.complete()
        assert done == [aqless.JobState.COMPLETE]
