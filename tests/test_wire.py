"""The lean connection of script calls (aqless._connection.lean): replies reach their callers in
order,
a dropped or stalled connection fails what it carried and the next call connects again."""

from __future__ import annotations

import asyncio
import time
import uuid

import anyio
import pytest
import redis.asyncio as aioredis
from redis.asyncio.connection import AbstractConnection
from redis.asyncio.sentinel import SentinelConnectionPool
from redis.credentials import CredentialProvider
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from aqless import Client, Durability, JobNotFoundError
from aqless._connection import endpoint
from aqless._connection.endpoint import Endpoint
from aqless._connection.lean import LeanConnection, pack, pieces
from aqless.errors import ConfigurationError, ConnectionLostError, NotDurableError
from tests.support.blackhole_proxy import BlackholeProxy

pytest_plugins = ["tests.support.client_fixtures"]


def wire_of(client: Client) -> LeanConnection:
    return client.protocol.wire


async def wire_connection_id(client: Client, name: str) -> int:
    """The server's id of the client's LeanConnection connection, found by naming it."""
    await wire_of(client).call(("CLIENT", "SETNAME", name))
    for entry in await client.redis.client_list():
        if entry.get("name") == name:
            return int(entry["id"])
    raise AssertionError(f"no connection named {name}")


async def test_concurrent_calls_get_their_own_replies(client: Client) -> None:
    queue = client.queues["q"]
    jids = [f"job-{n}" for n in range(200)]

    async def put(n: int, jid: str) -> None:
        await queue.put("k", {"n": n}, jid=jid)

    async with anyio.create_task_group() as group:
        for n, jid in enumerate(jids):
            group.start_soon(put, n, jid)
    jobs = {jid: await client.jobs.get(jid) for jid in jids}
    assert all(job is not None and job.data == {"n": n} for n, job in enumerate(jobs.values()))


async def test_replies_and_refusals_of_a_pipeline_stay_in_place(client: Client) -> None:
    wire = wire_of(client)
    await client.redis.set("a", "1")
    replies = await wire.pipeline([("GET", "a"), ("INCRBY", "a", "x"), ("GET", "missing")])
    assert replies[0] == "1"
    assert isinstance(replies[1], ResponseError)
    assert replies[2] is None
    with pytest.raises(ResponseError):
        await wire.call(("INCRBY", "a", "x"))
    assert await wire.call(("INCR", "a")) == 2


LARGE = b'{"pad":"' + b"x" * 20_000 + b'"}'


@pytest.mark.parametrize(
    "argv",
    [
        ("SET", "a", "1"),
        ("SET", "a", LARGE),
        (LARGE, "b", 2, 1.5),
        ("EVALSHA", "sha", 0, LARGE, LARGE, "é", b"small"),
        (LARGE,),
    ],
)
def test_large_arguments_go_apart_in_the_same_bytes(argv: tuple[str | bytes | float, ...]) -> None:
    parts = pieces(argv)
    assert b"".join(parts) == pack(argv)
    assert any(part is LARGE for part in parts) == (LARGE in argv)  # written, not copied


async def test_pipelined_calls_with_large_arguments_reach_the_server_whole(
    client: Client,
) -> None:
    wire = wire_of(client)
    values = [LARGE + bytes([n]) for n in range(3)]
    commands = [("SET", f"k{n}", value, "GET") for n, value in enumerate(values)]
    await wire.pipeline(commands)
    assert await wire.call(("GET", "k1")) == (LARGE + bytes([1])).decode()
    assert await wire.pipeline([("STRLEN", f"k{n}") for n in range(3)]) == [len(LARGE) + 1] * 3


async def test_a_refused_script_call_raises_the_typed_error(client: Client) -> None:
    with pytest.raises(JobNotFoundError):
        await client.protocol.call("job.complete", "nobody", "w", "q", "{}")
    assert await client.queues["q"].length() == 0  # and the connection still serves


async def test_a_cancelled_caller_leaves_the_replies_of_others_in_order(client: Client) -> None:
    wire = wire_of(client)
    await client.redis.mset({"a": "A", "b": "B"})
    slow = asyncio.ensure_future(wire.call(("GET", "a")))
    after = asyncio.ensure_future(wire.call(("GET", "b")))
    slow.cancel()
    assert await after == "B"
    assert await wire.call(("GET", "a")) == "A"


async def test_of_replies_read_together_the_first_callers_next_call_goes_before_the_next_reply(
    client: Client,
) -> None:
    """Two calls on their way whose replies come in one read: the first caller, and a task it
    starts, run before the second caller hears its reply (a worker's next pop is written
    before it reads the other pop's reply, so the two do not land and go again together)."""
    wire = wire_of(client)
    await wire.call(("PING",))  # connected
    heard: list[str] = []

    async def follow_up() -> None:
        heard.append("follow-up sent")
        await wire.call(("PING",))

    async def first() -> None:
        await wire.call(("ECHO", "first"))
        heard.append("first")
        asyncio.get_running_loop().create_task(follow_up())

    async def second() -> None:
        await wire.call(("ECHO", "second"))
        heard.append("second")

    async with anyio.create_task_group() as group:
        group.start_soon(first)
        group.start_soon(second)  # both written in one turn: their replies come together
    await anyio.wait_all_tasks_blocked()
    assert heard == ["first", "follow-up sent", "second"]


async def test_a_dropped_connection_fails_its_calls_and_the_next_one_reconnects(
    client: Client,
) -> None:
    queue = client.queues["q"]
    await queue.put("k", {}, jid="before")
    killer = client.redis
    wire_id = await wire_connection_id(client, "aqless-wire-test")
    await killer.client_pause(2000)  # so a call is in flight when the connection goes
    try:
        pending = asyncio.ensure_future(queue.put("k", {}, jid="during"))
        await asyncio.sleep(0.1)
        assert not pending.done()
        await killer.execute_command("CLIENT", "KILL", "ID", wire_id)
        with pytest.raises(ConnectionLostError):
            await pending
    finally:
        await killer.client_unpause()
    await queue.put("k", {}, jid="after")
    assert all([await client.jobs.get("before"), await client.jobs.get("after")])


async def test_an_abandoned_connection_fails_its_calls_and_the_next_one_reconnects(
    client: Client,
) -> None:
    queue = client.queues["q"]
    await queue.length()
    await client.redis.client_pause(2000)  # the call below gets no reply
    try:
        pending = asyncio.ensure_future(queue.put("k", {}, jid="during"))
        await asyncio.sleep(0.1)
        client.protocol.abandon_connection("no reply for too long")
        with pytest.raises(ConnectionLostError, match="no reply for too long"):
            await pending
    finally:
        await client.redis.client_unpause()
    await queue.put("k", {}, jid="after")
    assert await client.jobs.get("after") is not None


async def test_a_connection_the_server_closed_while_idle_is_replaced_unnoticed(
    client: Client,
) -> None:
    queue = client.queues["q"]
    await queue.put("k", {}, jid="before")
    wire_id = await wire_connection_id(client, "aqless-idle-test")
    await client.redis.execute_command("CLIENT", "KILL", "ID", wire_id)
    # at once: the event loop may not have seen the connection close yet
    await queue.put("k", {}, jid="after")
    assert await queue.length() == 2


async def test_a_stalled_server_fails_the_call_after_the_socket_timeout(
    server_url: str,
) -> None:
    admin = aioredis.Redis.from_url(server_url, decode_responses=True)
    async with Client(server_url, socket_timeout=0.3) as client:
        await client.queues["q"].length()
        await admin.client_pause(1500)
        started = time.monotonic()
        try:
            with pytest.raises(ConnectionLostError):
                await client.queues["q"].length()
            waited = time.monotonic() - started
        finally:
            await admin.client_unpause()  # Redis 7 may hold this until the pause ends
            await admin.aclose()
        assert 0.25 < waited < 1.2
        assert await client.queues["q"].length() >= 0  # a new connection serves


async def test_a_callers_deadline_ends_its_wait_not_the_connect_others_share(
    server_url: str,
) -> None:
    """Cut off (a partition: the connect's SYN goes unanswered), one caller gives up at its
    deadline; the connect goes on for the others, who get their replies once it heals."""
    async with BlackholeProxy(server_url) as proxy, Client(proxy.url) as client:
        queue = client.queues[f"cut-{uuid.uuid4().hex}"]
        await queue.length()
        proxy.cut()
        client.protocol.abandon_connection("the test cuts the network")
        outcomes: list[object] = []

        async def impatient() -> None:
            with pytest.raises(TimeoutError):
                with anyio.fail_after(0.3):
                    await queue.length()
            outcomes.append("gave up")

        async def patient() -> None:
            outcomes.append(await queue.length())

        with anyio.fail_after(8):
            async with anyio.create_task_group() as group:
                group.start_soon(impatient)
                group.start_soon(patient)
                await anyio.sleep(0.6)
                proxy.heal()
        assert sorted(map(str, outcomes)) == ["0", "gave up"]


async def test_a_connect_nobody_answers_fails_within_the_connect_timeout(
    server_url: str,
) -> None:
    async with (
        BlackholeProxy(server_url) as proxy,
        Client(proxy.url, socket_connect_timeout=0.5) as client,
    ):
        await client.queues["q"].length()
        proxy.cut()
        client.protocol.abandon_connection("the test cuts the network")
        started = time.monotonic()
        with pytest.raises(ConnectionLostError, match="cannot connect"):
            await client.queues["q"].length()
        assert time.monotonic() - started < 1.5
        proxy.heal()


async def test_a_call_nobody_answers_fails_after_the_default_reply_timeout(
    server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No socket_timeout given: a partition still ends a call in bounded time."""
    monkeypatch.setattr(endpoint, "REPLY_TIMEOUT", 0.5)
    async with BlackholeProxy(server_url) as proxy, Client(proxy.url) as client:
        queue = client.queues[f"cut-{uuid.uuid4().hex}"]
        await queue.length()
        proxy.cut()
        started = time.monotonic()
        with pytest.raises(ConnectionLostError):
            await queue.put("k", {})
        assert time.monotonic() - started < 1.5
        proxy.heal()
        assert await queue.length() == 0  # the proxy dropped it


async def test_replies_that_trickle_in_keep_a_pipeline_going_past_the_socket_timeout() -> None:
    """The socket timeout counts the connection's silence while a call waits: a pipeline
    whose replies come one by one, each sooner than the timeout, is not dropped, however
    long it takes as a whole."""

    writers: list[asyncio.StreamWriter] = []

    async def slow_pongs(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writers.append(writer)
        while data := await reader.read(65536):
            for _ in range(data.count(b"PING")):
                await asyncio.sleep(0.15)
                writer.write(b"+PONG\r\n")
                await writer.drain()
        writer.close()

    server = await asyncio.start_server(slow_pongs, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    client = Client(f"redis://127.0.0.1:{port}", socket_timeout=0.5)
    try:
        replies = await wire_of(client).pipeline([("PING",)] * 8)  # 1.2 s in all
        assert replies == ["PONG"] * 8
    finally:
        await client.close()
        server.close()
        for writer in writers:  # the handler may not run again before the loop closes
            writer.close()


async def test_a_durable_put_may_wait_longer_than_the_reply_timeout(
    server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """WAITAOF holds its reply for its own timeout on purpose: the reply timeout counts from
    its end."""
    monkeypatch.setattr(endpoint, "REPLY_TIMEOUT", 0.3)
    async with Client(server_url) as client:
        if not await client.protocol.knows("WAITAOF"):
            pytest.skip("this server has no WAITAOF")
        wanted = Durability(local=False, replicas=1, timeout=0.8)  # no replica: it waits
        started = time.monotonic()
        with pytest.raises(NotDurableError):
            await client.queues["q"].put("k", {}, durable=wanted)
        assert time.monotonic() - started >= 0.7


async def test_the_wire_selects_the_urls_database_and_names_itself(server_url: str) -> None:
    url = server_url + "?db=3&client_name=aqless-db3"
    async with Client(url) as client:
        await client.redis.flushdb()
        await client.queues["q"].put("k", {}, jid="in-db-3")
        clients = await client.redis.client_list()
        assert [c for c in clients if c.get("name") == "aqless-db3" and c.get("db") == "3"]
        assert await client.redis.exists("ql:j:in-db-3") == 1
    other = aioredis.Redis.from_url(server_url, decode_responses=True)
    try:
        assert await other.exists("ql:j:in-db-3") == 0
    finally:
        await other.aclose()


async def test_a_closed_client_sends_nothing_more(server_url: str) -> None:
    client = Client(server_url)
    await client.queues["q"].length()
    wire = wire_of(client)
    await client.close()
    with pytest.raises(RedisConnectionError):
        await wire.call(("PING",))


def test_a_client_used_from_another_event_loop_moves_its_connection_there(
    server_url: str,
) -> None:
    client = Client(server_url)
    first, second = asyncio.new_event_loop(), asyncio.new_event_loop()

    async def put(jid: str) -> int:
        await client.queues["q"].put("k", {}, jid=jid)
        return await client.queues["q"].length()

    try:
        before = first.run_until_complete(put("one"))
        assert second.run_until_complete(put("two")) == before + 1
        first.run_until_complete(asyncio.sleep(0))  # the first loop's connection closes
        second.run_until_complete(client.close())
    finally:
        first.close()
        second.close()


class PlainConnection(AbstractConnection):
    """A connection class of one's own: the lean connection cannot know what it does."""


@pytest.mark.parametrize(
    ("pool", "kind"),
    [
        (aioredis.ConnectionPool.from_url("redis://user:secret@h:1/2?client_name=x"), "tcp"),
        (aioredis.ConnectionPool.from_url("unix:///tmp/s.sock"), "unix"),
        (aioredis.ConnectionPool.from_url("rediss://h:1"), "tls"),
        (aioredis.ConnectionPool(host="h", retry=None, health_check_interval=30), "tcp"),
        (SentinelConnectionPool("svc", object()), "sentinel"),  # type: ignore[no-untyped-call]
    ],
)
def test_every_kind_of_connection_has_its_endpoint(
    pool: aioredis.ConnectionPool, kind: str
) -> None:
    assert Endpoint.of(aioredis.Redis(connection_pool=pool), "ql:").kind == kind


@pytest.mark.parametrize(
    ("pool", "named"),
    [
        (aioredis.ConnectionPool.from_url("redis://h:1", protocol=3), "protocol=3"),
        (aioredis.ConnectionPool(host="h", redis_connect_func=print), "redis_connect_func"),
        (
            aioredis.ConnectionPool(connection_class=PlainConnection),  # type: ignore[type-abstract]
            "PlainConnection",
        ),
    ],
)
def test_an_option_the_lean_connection_cannot_honour_is_refused_by_name(
    pool: aioredis.ConnectionPool, named: str
) -> None:
    with pytest.raises(ConfigurationError, match=named):
        Endpoint.of(aioredis.Redis(connection_pool=pool), "ql:")


class RecordingCredentials(CredentialProvider):
    """Credentials asked for at every connection (the default user takes any password)."""

    def __init__(self) -> None:
        self.asked = 0

    async def get_credentials_async(self) -> tuple[str, str]:
        self.asked += 1
        return ("default", "any-password")


async def test_a_credential_provider_is_asked_at_every_connection(server_url: str) -> None:
    credentials = RecordingCredentials()
    made = aioredis.Redis.from_url(
        server_url, decode_responses=True, credential_provider=credentials
    )
    try:
        async with Client(redis=made) as client:
            await client.queues["q"].length()
            assert credentials.asked == 1
            client.protocol.abandon_connection("for a new one")
            await client.queues["q"].length()
            assert credentials.asked == 2
    finally:
        await made.aclose()
