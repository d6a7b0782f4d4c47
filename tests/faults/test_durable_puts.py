"""Durable puts (``put(..., durable=...)``): the put and a WAITAOF go in one round trip, and
the put returns only once the server confirms the copies asked for. A server SIGKILLed
right after each reply and started again on its data still has every job; a server that
cannot confirm (AOF off, too few replicas) raises NotDurableError with the job put; a
server without WAITAOF (Redis before 7.2) refuses before anything is put."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
import redis

import aqless
from tests.faults.durable import kill_after_each_put
from tests.faults.harness import OwnServer
from tests.support import servers

pytestmark = [pytest.mark.faults, pytest.mark.timeout(120)]

TRIES = 50  # benchmarks/durable_puts.py runs 1,000


@pytest.fixture
def valkey() -> Iterator[OwnServer]:
    """A Valkey 9 server of the test's own (AOF on, fsync every second)."""
    server = OwnServer("everysec")
    server.start()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(params=["lean", "redis-py"])
async def client(request: pytest.FixtureRequest, valkey: OwnServer) -> AsyncIterator[aqless.Client]:
    """A client of `valkey` whose script calls go over the lean connection, or through
    redis-py's connections."""
    async with aqless.Client(valkey.url, script_connection=request.param) as made:
        yield made


def aof_off(server: OwnServer) -> None:
    with redis.Redis(unix_socket_path=str(server.socket)) as connection:
        connection.config_set("appendonly", "no")


@pytest.mark.parametrize("appendfsync", ["always", "everysec"])
async def test_acknowledged_durable_puts_survive_a_sigkill_of_the_server(
    appendfsync: str,
) -> None:
    server = OwnServer(appendfsync)
    server.start()
    try:
        tally = await kill_after_each_put(server, TRIES, durable=True)
    finally:
        server.close()
    assert tally.tries == TRIES
    assert tally.lost == []


async def test_a_durable_put_is_confirmed_and_returns_its_jid(client: aqless.Client) -> None:
    queue = client.queues["q"]
    jid = await queue.put("app.Job", {"n": 1}, jid="kept", durable=aqless.Durability())
    assert jid == "kept"
    assert await queue.put("app.Job", {"n": 2}, durable=False) != jid
    job = await client.jobs.get("kept")
    assert job is not None
    assert job.data == {"n": 1}


async def test_without_aof_a_durable_put_raises_not_durable_but_is_put(
    client: aqless.Client, valkey: OwnServer
) -> None:
    aof_off(valkey)
    with pytest.raises(aqless.NotDurableError, match="appendonly") as raised:
        await client.queues["q"].put("app.Job", {}, jid="unconfirmed", durable=True)
    assert raised.value.jids == ["unconfirmed"]
    assert await client.jobs.get("unconfirmed") is not None


async def test_too_few_replicas_within_the_timeout_is_not_durable(client: aqless.Client) -> None:
    wanted = aqless.Durability(local=False, replicas=1, timeout=0.05)
    with pytest.raises(aqless.NotDurableError, match="0 replica") as raised:
        await client.queues["q"].put("app.Job", {}, jid="alone", durable=wanted)
    assert raised.value.jids == ["alone"]
    assert await client.jobs.get("alone") is not None


async def test_durable_put_many_confirms_each_batch(
    client: aqless.Client, valkey: OwnServer
) -> None:
    queue = client.queues["q"]
    requests = [aqless.PutRequest("app.Job", {}, jid=f"j{n}") for n in range(7)]
    assert await queue.put_many(requests, batch=3, durable=True) == [f"j{n}" for n in range(7)]
    aof_off(valkey)
    again = [aqless.PutRequest("app.Job", {}, jid=f"k{n}") for n in range(7)]
    with pytest.raises(aqless.NotDurableError) as raised:
        await queue.put_many(again, batch=3, durable=True)
    assert raised.value.jids == ["k0", "k1", "k2"]  # the first batch, and no more
    found = {job.jid for job in await client.jobs.get_many([f"k{n}" for n in range(7)])}
    assert found == {"k0", "k1", "k2"}


async def test_a_durable_put_goes_through_the_put_hooks(client: aqless.Client) -> None:
    seen: list[str | None] = []

    async def hook(
        queue: aqless.Queue, requests: list[aqless.PutRequest], send: aqless.puts.PutSender
    ) -> list[str]:
        seen.extend(request.jid for request in requests)
        return await send(requests)

    client.put_hooks.append(hook)
    assert await client.queues["q"].put("app.Job", {}, jid="hooked", durable=True) == "hooked"
    assert seen == ["hooked"]


async def test_a_server_without_waitaof_refuses_durable_puts_before_putting() -> None:
    binary = servers.redis7_or_skip()
    server = OwnServer("always", binary=binary)
    server.start()
    try:
        async with aqless.Client(server.url) as client:
            if await client.protocol.knows("WAITAOF"):
                pytest.skip("this redis-server has WAITAOF (7.2+)")
            queue = client.queues["q"]
            with pytest.raises(aqless.ConfigurationError, match="WAITAOF"):
                await queue.put("app.Job", {}, jid="refused", durable=True)
            with pytest.raises(aqless.ConfigurationError, match="WAITAOF"):
                await queue.put_many([aqless.PutRequest("app.Job", jid="many")], durable=True)
            assert await client.jobs.get_many(["refused", "many"]) == []
            assert await queue.put("app.Job", {}, jid="plain") == "plain"
    finally:
        server.close()


@pytest.mark.parametrize(
    "options",
    [{"local": False}, {"replicas": -1}, {"timeout": 0}, {"timeout": float("nan")}],
)
def test_a_durability_that_asks_for_nothing_or_never_ends_is_refused(
    options: dict[str, float],
) -> None:
    with pytest.raises(aqless.ConfigurationError):
        aqless.Durability(**options)  # type: ignore[arg-type]
