"""A full server refuses writes: at ``maxmemory`` under ``noeviction`` (``OOM``), or unable to
persist (``MISCONF``: its last save failed and ``stop-writes-on-bgsave-error`` is on).
Every verb raises ServerFullError with the condition, nothing of a refused call is written,
a worker sends its outcomes again until they land, and the dashboard says why.

OOM is made by filling the server, then setting ``maxmemory`` below what it uses; it clears
when the filler is deleted. MISCONF is made by moving the server's ``dir`` to a folder that
is then removed (a failed BGSAVE even as root); it clears with a BGSAVE that succeeds."""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import anyio
import httpx
import pytest
import redis

import aqless
from aqless.ops import audit
from aqless.scripts.staging import STAGED_BYTES
from aqless.web import create_app
from tests.faults.harness import OwnServer, server_binary
from tests.support.worker_processes import eventually

pytestmark = [pytest.mark.faults, pytest.mark.timeout(120)]

FILLER = [f"filler:{n}" for n in range(64)]  # 4 MB
Condition = Callable[[OwnServer], AbstractAsyncContextManager[None]]


@pytest.fixture(params=["valkey9", "redis7"])
def server(request: pytest.FixtureRequest) -> Iterator[OwnServer]:
    """A server of the test's own: its memory limit and data folder may be changed."""
    binary = server_binary(request.param)
    own = OwnServer(
        binary=binary,
        extra=("--enable-protected-configs", "yes", "--maxmemory-policy", "noeviction"),
    )
    own.start()
    try:
        yield own
    finally:
        own.close()


def admin(server: OwnServer) -> redis.Redis:
    return redis.Redis(unix_socket_path=str(server.socket), decode_responses=True)


@asynccontextmanager
async def out_of_memory(server: OwnServer) -> AsyncIterator[None]:
    """Inside, the server is above its ``maxmemory``; on exit its memory is freed."""
    with admin(server) as connection:
        for key in FILLER:
            connection.set(key, "x" * 65_536)
        used = int(connection.info("memory")["used_memory"])
        # 3 MB under: the server's own use moves by some hundred kilobytes, and once by over
        # the megabyte under it this was (a worker's complete then landed, under load); the
        # filler's 4 MB deleted leave room
        connection.config_set("maxmemory", used - 3 * 1024 * 1024)
    yield
    with admin(server) as connection:
        connection.delete(*FILLER)


async def saved(server: OwnServer, status: str) -> None:
    """BGSAVE, then wait until it has ended with `status` (``ok`` or ``err``)."""
    with admin(server) as connection:
        connection.bgsave()

        def done() -> bool:
            persistence = connection.info("persistence")
            return not persistence["rdb_bgsave_in_progress"] and (
                persistence["rdb_last_bgsave_status"] == status
            )

        await eventually(done, 10, f"a BGSAVE ending {status}")


@asynccontextmanager
async def unable_to_persist(server: OwnServer) -> AsyncIterator[None]:
    """Inside, the server's last save failed (MISCONF); on exit it saves again."""
    gone = tempfile.mkdtemp(prefix="aqless-gone-")
    with admin(server) as connection:
        connection.config_set("save", "3600 1")  # stop-writes-on-bgsave-error needs saving
        connection.config_set("dir", gone)
    os.rmdir(gone)
    await saved(server, "err")
    yield
    with admin(server) as connection:
        connection.config_set("dir", str(server.folder))
    await saved(server, "ok")


CONDITIONS = {"OOM": out_of_memory, "MISCONF": unable_to_persist}


@pytest.fixture(params=sorted(CONDITIONS))
def condition(request: pytest.FixtureRequest) -> tuple[str, Condition]:
    return request.param, CONDITIONS[request.param]


def snapshot(server: OwnServer) -> dict[str, bytes]:
    """Every ``ql:`` key and its serialized value."""
    with redis.Redis(unix_socket_path=str(server.socket)) as connection:
        return {key.decode(): connection.dump(key) for key in connection.scan_iter("ql:*")}


def verbs(
    client: aqless.Client, running: aqless.Job, waiting: aqless.Job
) -> dict[str, Callable[[], Awaitable[object]]]:
    queue = client.queues["q"]
    big = {"pad": "x" * STAGED_BYTES}
    return {
        "put": lambda: queue.put("app.Job", {}, jid="refused-put"),
        "put_many": lambda: queue.put_many([aqless.PutRequest("app.Job", {}, jid="refused-many")]),
        # a big put's data goes beside the script, in a transaction (aqless.scripts.staging)
        "put, staged": lambda: queue.put("app.Job", big, jid="refused-staged"),
        "put_many, staged": lambda: queue.put_many(
            [aqless.PutRequest("app.Job", big, jid="refused-many-staged")]
        ),
        "pop": lambda: queue.pop(worker="w"),
        "recur": lambda: queue.recur("app.Job", {}, interval=60, jid="refused-recur"),
        "pause": lambda: queue.pause(),
        "complete": lambda: running.complete(),
        "fail": lambda: running.fail("group", "message"),
        "retry": lambda: running.retry(),
        "heartbeat": lambda: running.heartbeat(),
        "cancel": lambda: waiting.cancel(),
        "jobs.cancel": lambda: client.jobs.cancel(waiting.jid),
        "tag": lambda: waiting.tag("t"),
        "track": lambda: waiting.track(),
        "set_priority": lambda: waiting.set_priority(5),
        "move": lambda: waiting.move("elsewhere"),
        "config.set": lambda: client.config.set("probe", 1, force=True),
        "throttle.set": lambda: client.throttles["t"].set(3),
        "audit.record": lambda: audit.record(client, audit.entry("ann@host", "cli", "pause")),
    }


async def test_every_verb_is_refused_with_the_condition_and_nothing_is_written(
    server: OwnServer, condition: tuple[str, Condition]
) -> None:
    name, make = condition
    async with aqless.Client(server.url, worker_name="w") as client:
        queue = client.queues["q"]
        await queue.put("app.Job", {}, jid="running")
        running = await queue.pop(worker="w")
        assert running is not None
        waiting = await client.jobs.get(await queue.put("app.Job", {}, jid="waiting"))
        assert isinstance(waiting, aqless.Job)
        before = snapshot(server)

        async with make(server):
            for verb, call in verbs(client, running, waiting).items():
                with pytest.raises(aqless.ServerFullError) as refused:
                    await call()
                assert refused.value.condition == name, verb
            assert snapshot(server) == before  # not one key written, changed or removed

        # served again: what was refused can be done now
        assert await queue.put("app.Job", {}, jid="refused-put") == "refused-put"
        await running.complete()
        done = await client.jobs.get("running")
        assert isinstance(done, aqless.Job)
        assert done.state == aqless.JobState.COMPLETE


async def test_a_worker_sends_its_outcome_again_until_the_server_has_room(
    server: OwnServer, condition: tuple[str, Condition], caplog: pytest.LogCaptureFixture
) -> None:
    name, make = condition
    handlers = aqless.Handlers()
    started, release = anyio.Event(), anyio.Event()
    runs: list[str] = []

    @handlers.register("app.Slow")
    async def slow(job: aqless.Job) -> None:
        runs.append(job.jid)
        started.set()
        await release.wait()

    async with aqless.Client(server.url) as client:
        first = await client.queues["q"].put("app.Slow", {})
        second = await client.queues["q"].put("app.Slow", {})  # waits for the only slot
        worker = aqless.Worker(client, ["q"], handlers=handlers, concurrency=1, interval=0.2)
        async with anyio.create_task_group() as group:
            group.start_soon(worker.run)
            await started.wait()
            # each refused try is a debug line; the outage itself one warning
            with caplog.at_level(logging.DEBUG, logger="aqless._worker"):
                async with make(server):
                    release.set()  # the code returns: its complete meets the full server
                    await eventually(
                        lambda: f"complete of job {first}" in caplog.text and name in caplog.text,
                        10,
                        "the complete refused",
                    )
                    assert worker.counters.completed == 0
            await eventually(lambda: worker.counters.completed == 2, 30, "both jobs completed")
            worker.stop()
        assert runs == [first, second]  # each ran once: no outcome given up, nothing lost
        for jid in (first, second):
            job = await client.jobs.get(jid)
            assert isinstance(job, aqless.Job)
            assert job.state == aqless.JobState.COMPLETE


async def test_the_dashboard_shows_the_condition(
    server: OwnServer, condition: tuple[str, Condition]
) -> None:
    name, make = condition
    async with aqless.Client(server.url) as client:
        await client.queues["q"].put("app.Job", {})
        transport = httpx.ASGITransport(app=create_app(client))
        async with httpx.AsyncClient(transport=transport, base_url="http://dash") as dash:
            assert "flash-error" not in (await dash.get("/about")).text
            async with make(server):
                about = await dash.get("/about")  # INFO is answered: the page says why
                assert about.status_code == 200
                assert f"<strong>{name}</strong>" in about.text
                overview = await dash.get("/")  # its reads go through the script: refused
                assert overview.status_code == 503
                assert f"({name})" in overview.text
                said = overview.text.split("The server said:")[1].split("</p>")[0]
                assert "&#39;" in said  # the server's text, escaped
                assert not {"'", ">"} & set(said)
                api = await dash.get("/api/queues/q")
                assert api.status_code == 503
                assert api.json()["condition"] == name
                assert (await dash.get("/api/about")).json()["memory"]["condition"]["code"] == name
            assert (await dash.get("/")).status_code == 200
            assert "flash-error" not in (await dash.get("/about")).text
