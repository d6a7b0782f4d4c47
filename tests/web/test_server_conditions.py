"""The dashboard's direct reads (those not made through the script: the search's scan, the
scheduled jobs' next starts, the queue's throughput, the worker records, the throttles'
SCAN and the about page's INFO) meet a server that cannot serve them as aqless's typed
errors, and their pages answer with the 503 condition page (the API with its typed error
object), never a generic error.

Each condition is made on a server of the test's own:

- ``BUSY``: a script that loops until SCRIPT KILL (``busy-reply-threshold`` lowered);
- ``LOADING``: DEBUG RELOAD of a data set loaded slowly (a delay per key); the server is
  killed at the end rather than waited for;
- ``MASTERDOWN``: a replica of a primary that is not there, serving no stale data (reads
  refused with ``MASTERDOWN``, writes with ``READONLY``);
- ``OOM``: above ``maxmemory`` (reads are served, writes refused);
- a lost link: the server killed.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass

import anyio
import httpx
import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

import aqless
from aqless._worker.counters import WorkerCounters
from aqless._worker.info import InfoPublisher
from aqless.ops import search as finding
from aqless.ops import suggest
from aqless.ops.listings import throttle_documents
from aqless.web import create_app, held, throughput
from aqless.web.condition import LOST, condition_code
from tests.faults.harness import OwnServer, free_port, server_binary
from tests.support.worker_processes import eventually

pytestmark = [pytest.mark.faults, pytest.mark.timeout(120)]

SLOW_LOADING = (
    "--key-load-delay", "2000",
    "--loading-process-events-interval-bytes", "1024",
    "--enable-debug-command", "yes",
)  # fmt: skip
RELOADED = 5_000  # keys loaded again at 2 ms each: seconds of LOADING, longer than the test


def admin(server: OwnServer) -> redis.Redis:
    return redis.Redis(
        unix_socket_path=str(server.socket), decode_responses=True, retry=Retry(NoBackoff(), 0)
    )


@asynccontextmanager
async def busy(server: OwnServer) -> AsyncIterator[None]:
    """Inside, a script loops on the server, which answers every other call ``BUSY``."""
    with admin(server) as connection:
        connection.config_set("busy-reply-threshold", 50)

    def loop() -> None:
        with admin(server) as connection, contextlib.suppress(redis.ResponseError):
            connection.eval("while true do end", 0)  # until SCRIPT KILL

    def refusing() -> bool:
        with admin(server) as connection:
            try:
                connection.ping()
            except redis.ResponseError as error:
                return str(error).startswith("BUSY")
        return False

    looping = threading.Thread(target=loop)
    looping.start()
    try:
        await eventually(refusing, 10, "the server busy")
        yield
    finally:
        with admin(server) as connection:
            connection.script_kill()
        looping.join(10)


@asynccontextmanager
async def loading(server: OwnServer) -> AsyncIterator[None]:
    """Inside, the server loads its data again, answering ``LOADING``; it is killed after."""
    with admin(server) as connection:
        filling = connection.pipeline(transaction=False)
        for n in range(RELOADED):
            filling.set(f"filler:{n}", "x")
        filling.execute()

    def reload() -> None:
        with admin(server) as connection, contextlib.suppress(redis.RedisError):
            connection.execute_command("DEBUG", "RELOAD")  # ends when the server is killed

    def loads() -> bool:
        with admin(server) as connection:
            return bool(connection.info("persistence")["loading"] == 1)

    async with anyio.create_task_group() as group:
        group.start_soon(anyio.to_thread.run_sync, reload)
        try:
            await eventually(loads, 10, "the server loads")
            yield
        finally:
            server.kill()


@asynccontextmanager
async def stale_replica(server: OwnServer) -> AsyncIterator[None]:
    """Inside, the server is the replica of a primary that is not there, and serves no
    stale data: reads are refused ``MASTERDOWN``, writes ``READONLY``."""
    with admin(server) as connection:
        connection.config_set("replica-serve-stale-data", "no")
        connection.execute_command("REPLICAOF", "127.0.0.1", str(free_port()))
    try:
        yield
    finally:
        with admin(server) as connection:
            connection.execute_command("REPLICAOF", "NO", "ONE")
            connection.config_set("replica-serve-stale-data", "yes")


@asynccontextmanager
async def out_of_memory(server: OwnServer) -> AsyncIterator[None]:
    """Inside, the server is above its ``maxmemory``: it serves reads, refuses writes."""
    filler = [f"filler:{n}" for n in range(32)]
    with admin(server) as connection:
        for key in filler:
            connection.set(key, "x" * 65_536)
        used = int(connection.info("memory")["used_memory"])
        connection.config_set("maxmemory", used - 1024 * 1024)
    try:
        yield
    finally:
        with admin(server) as connection:
            connection.config_set("maxmemory", 0)
            connection.delete(*filler)


@asynccontextmanager
async def killed(server: OwnServer) -> AsyncIterator[None]:
    """Inside, the server is gone: every call loses its link."""
    server.kill()
    yield


@dataclass(frozen=True)
class Condition:
    """How to make a condition, and the code each kind of call meets under it (None: the
    server serves it); `pages`: the codes a page may show (its first refused call's)."""

    make: Callable[[OwnServer], AbstractAsyncContextManager[None]]
    reads: str | None
    writes: str | None
    info: str | None
    pages: frozenset[str]


CONDITIONS = {
    "BUSY": Condition(busy, "BUSY", "BUSY", "BUSY", frozenset({"BUSY"})),
    "LOADING": Condition(loading, "LOADING", "LOADING", None, frozenset({"LOADING"})),
    # the script writes, so a replica refuses it READONLY before the stale data matters
    "MASTERDOWN": Condition(
        stale_replica, "MASTERDOWN", "READONLY", None, frozenset({"MASTERDOWN", "READONLY"})
    ),
    "OOM": Condition(out_of_memory, None, "OOM", None, frozenset({"OOM"})),
    LOST: Condition(killed, LOST, LOST, LOST, frozenset({LOST})),
}


@pytest.fixture(params=["valkey9", "redis7"])
def server(request: pytest.FixtureRequest) -> Iterator[OwnServer]:
    binary = server_binary(request.param)
    own = OwnServer(binary=binary, extra=("--maxmemory-policy", "noeviction", *SLOW_LOADING))
    own.start()
    try:
        yield own
    finally:
        own.close()


@pytest.fixture(params=sorted(CONDITIONS))
def condition(request: pytest.FixtureRequest) -> tuple[str, Condition]:
    return request.param, CONDITIONS[request.param]


async def with_data(client: aqless.Client) -> tuple[str, str, InfoPublisher]:
    """A waiting job, a scheduled one and a worker's record; their jids and the publisher."""
    queue = client.queues["q"]
    waiting = await queue.put("app.Job", {"a": 1})
    later = await queue.put("app.Job", {"a": 2}, delay=3600)
    publisher = InfoPublisher(client, "w1", ["q"], 1, WorkerCounters())
    await publisher.publish()
    return waiting, later, publisher


async def expect(code: str | None, call: Callable[[], Awaitable[object]], what: str) -> None:
    """`call` is served (`code` None), or raises the typed error of the condition `code`."""
    if code is None:
        await call()
        return
    with pytest.raises(aqless.ConnectionLostError) as refused:
        await call()
    assert condition_code(refused.value) == code, f"{what}: {refused.value!r}"
    assert isinstance(refused.value, aqless.ServerUnavailableError) is (code != LOST), what


async def test_every_direct_read_raises_the_typed_error_of_the_condition(
    server: OwnServer, condition: tuple[str, Condition]
) -> None:
    name, made = condition
    async with aqless.Client(server.url) as client:
        waiting, later, publisher = await with_data(client)
        by_data = finding.Filters.parse({"where": ["a = 1"], "queue": ["q"]})
        by_jid = finding.Filters.parse({"jid": [waiting], "where": ["a = 1"]})
        reads: dict[str, Callable[[], Awaitable[object]]] = {
            "search listing": lambda: finding.find(client, by_data),
            "search scan": lambda: finding.find(client, by_jid),
            "search names": lambda: suggest.names(client),
            "next starts": lambda: held.schedules(client, "q", [later]),
            "throughput": lambda: throughput.per_minute(client, "q"),
            "worker records": lambda: client.workers.records(),
        }
        async with made.make(server):
            for what, call in reads.items():
                await expect(made.reads, call, f"{name}: {what}")
            await expect(made.writes, publisher.publish, f"{name}: worker record")
            # a script call (its listing drops expired throttles from the index): as a write
            await expect(made.writes, lambda: throttle_documents(client), f"{name}: throttles")


PAGES = (
    "/search?queue=q&state=waiting&where=a%3D1",
    "/queues/q?state=scheduled",
    "/workers",
    "/workers/w1",
    "/throttles",
)


async def test_each_page_with_a_direct_read_shows_the_condition_page(
    server: OwnServer, condition: tuple[str, Condition]
) -> None:
    _, made = condition
    async with aqless.Client(server.url) as client:
        await with_data(client)
        transport = httpx.ASGITransport(app=create_app(client))
        async with httpx.AsyncClient(transport=transport, base_url="http://dash") as dash:
            for path in (*PAGES, "/about"):
                assert (await dash.get(path)).status_code == 200, path
            async with made.make(server):
                for path in PAGES:
                    await shows_the_condition(dash, path, made.pages)
                if made.info is None:  # INFO is answered: the about page shows
                    assert (await dash.get("/about")).status_code == 200
                else:
                    await shows_the_condition(dash, "/about", frozenset({made.info}))


async def shows_the_condition(dash: httpx.AsyncClient, path: str, codes: frozenset[str]) -> None:
    page = await dash.get(path)
    assert page.status_code == 503, (path, page.text[-500:])
    assert "The server said:" in page.text, path
    if LOST in codes:
        assert "lost its link to the server" in page.text, path
    else:
        assert any(f"({code})" in page.text for code in codes), path
    api = await dash.get("/api" + path, headers={"accept": "application/json"})
    assert api.status_code == 503, path
    answer = api.json()
    assert answer["ok"] is False
    assert answer["condition"] in codes, (path, answer)
    if answer["condition"] == LOST:
        assert answer["type"] == "ConnectionLostError"
    else:
        full = answer["condition"] in ("OOM", "MISCONF")
        assert answer["type"] == ("ServerFullError" if full else "ServerUnavailableError")


async def test_a_subscription_the_server_refuses_raises_the_typed_error(
    server: OwnServer, condition: tuple[str, Condition]
) -> None:
    """SUBSCRIBE is served while loading, on a stale replica and when full; a running
    script's ``BUSY`` and a lost link are the typed errors, not an invalid argument."""
    name, made = condition
    refused = {"BUSY": "BUSY", LOST: LOST}.get(name)
    async with aqless.Client(server.url) as client, made.make(server):

        async def subscribe() -> None:
            async with client.events():
                pass

        await expect(refused, subscribe, f"{name}: subscribe")
