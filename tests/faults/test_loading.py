"""A restarted server reading its data back (the ``-LOADING`` window) refuses every call:
the refusal reaches the caller as ServerUnavailableError, never as a reply, so a put is
acknowledged only once it is stored, and a worker's outcome is sent again until it lands.

The server is made to load slowly (a delay per key replayed from its append-only file), so
calls meet the window for seconds, as they would on a large data set."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager

import anyio
import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

import aqless
from tests.faults.harness import OwnServer, server_binary
from tests.support.worker_processes import eventually

pytestmark = [pytest.mark.faults, pytest.mark.timeout(120)]

FILLER = 1_500  # keys to load again, at 2 ms each: seconds of loading
SLOW_LOADING = (
    "--key-load-delay", "2000",
    "--loading-process-events-interval-bytes", "1024",
    "--enable-debug-command", "yes",
)  # fmt: skip


@pytest.fixture(params=["valkey9", "redis7"])
def slow_loading(request: pytest.FixtureRequest) -> Iterator[OwnServer]:
    """A server (AOF, fsync always) that takes seconds to load its data again."""
    binary = server_binary(request.param)
    server = OwnServer("always", binary=binary, extra=SLOW_LOADING)
    server.start()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(params=["lean", "redis-py"])
def connect(
    request: pytest.FixtureRequest,
) -> Callable[[OwnServer], aqless.Client]:
    """A client whose script calls go over the lean connection, or through redis-py's
    connections (the ``script_connection="redis-py"`` diagnostic)."""

    def client(server: OwnServer) -> aqless.Client:
        made = aqless.Client(server.url, script_connection=request.param)
        assert made.protocol.script.uses_lean_connection is (request.param == "lean")
        return made

    return client


def loading(server: OwnServer) -> bool:
    with redis.Redis(unix_socket_path=str(server.socket), decode_responses=True) as connection:
        return bool(connection.info("persistence")["loading"] == 1)


@asynccontextmanager
async def reloading(server: OwnServer, client: aqless.Client) -> AsyncIterator[None]:
    """While inside, the server reads its data again, as after a restart, refusing every
    call with ``-LOADING`` for seconds; its clients stay connected (DEBUG RELOAD)."""
    pipeline = client.redis.pipeline(transaction=False)
    for n in range(FILLER):
        pipeline.set(f"filler:{n}", "x")
    await pipeline.execute()

    def reload() -> None:
        # DEBUG RELOAD replies once the data is loaded again: seconds, more on a loaded
        # machine than redis-py's default 5 s socket timeout allows
        with redis.Redis(
            unix_socket_path=str(server.socket), retry=Retry(NoBackoff(), 0), socket_timeout=60
        ) as connection:
            connection.execute_command("DEBUG", "RELOAD")

    async with anyio.create_task_group() as group:
        group.start_soon(anyio.to_thread.run_sync, reload)
        await eventually(lambda: loading(server), 10, "the server loads")
        yield


async def test_calls_while_the_server_loads_raise_and_what_they_acknowledge_is_stored(
    slow_loading: OwnServer, connect: Callable[[OwnServer], aqless.Client]
) -> None:
    server = slow_loading
    async with connect(server) as client:
        queue = client.queues["q"]
        kept = await queue.put("app.Job", {}, jid="before")
        calls = Calls()
        async with reloading(server, client):
            while loading(server):
                await calls.make(client, kept)
                await anyio.sleep(0.05)

        conditions = {e.condition for e in calls.refusals}
        assert conditions == {"LOADING"}, calls.refusals
        assert calls.refused, "no put met the loading server"
        assert calls.refused_admin, "no admin call met the loading server"
        # what was acknowledged is stored; what was refused is not
        wanted = calls.acknowledged + calls.refused
        stored = {job.jid for job in await client.jobs.get_many(wanted)}
        assert set(calls.acknowledged) <= stored, set(calls.acknowledged) - stored
        assert not set(calls.refused) & stored, set(calls.refused) & stored
        config = await client.config.all()
        for attempt in calls.done_admin:
            assert config[f"probe-{attempt}"] == str(attempt)
            assert (await client.queues[f"paused-{attempt}"].counts()).paused
        for attempt in calls.refused_admin:
            assert f"probe-{attempt}" not in config
            assert not (await client.queues[f"paused-{attempt}"].counts()).paused


class Calls:
    """Puts and admin calls made while the server loads, and what became of each."""

    def __init__(self) -> None:
        self.acknowledged: list[str] = []  # returned a jid: must be stored
        self.refused: list[str] = []  # ServerUnavailableError: nothing ran, must not be
        self.done_admin: list[int] = []
        self.refused_admin: list[int] = []
        self.refusals: list[aqless.ServerUnavailableError] = []
        self.attempt = 0

    async def make(self, client: aqless.Client, kept: str) -> None:
        self.attempt = attempt = self.attempt + 1
        queue = client.queues["q"]
        try:
            self.acknowledged.append(await queue.put("app.Job", {}, jid=f"put-{attempt}"))
        except aqless.ServerUnavailableError as error:
            self.refusals.append(error)
            self.refused.append(f"put-{attempt}")
        batch = [f"many-{attempt}-{n}" for n in range(3)]
        try:
            self.acknowledged += await queue.put_many(
                [aqless.PutRequest("app.Job", {}, jid=jid) for jid in batch]
            )
        except aqless.ServerUnavailableError as error:
            self.refusals.append(error)
            self.refused += batch
        try:
            await client.config.set(f"probe-{attempt}", attempt, force=True)
        except aqless.ServerUnavailableError as error:
            self.refusals.append(error)
            self.refused_admin.append(attempt)
            return
        await client.queues[f"paused-{attempt}"].pause()  # the server serves again
        assert await client.config.get("heartbeat") == "60"
        job = await client.jobs.get(kept)
        assert job is not None
        assert job.jid == kept
        self.done_admin.append(attempt)


async def test_an_outcome_met_by_a_loading_server_is_sent_again_until_it_lands(
    slow_loading: OwnServer,
    caplog: pytest.LogCaptureFixture,
    connect: Callable[[OwnServer], aqless.Client],
) -> None:
    server = slow_loading
    handlers = aqless.Handlers()
    started, release = anyio.Event(), anyio.Event()
    runs: list[str] = []

    @handlers.register("app.Slow")
    async def slow(job: aqless.Job) -> None:
        runs.append(job.jid)
        started.set()
        await release.wait()

    async with connect(server) as client:
        jid = await client.queues["q"].put("app.Slow", {})
        worker = aqless.Worker(client, ["q"], handlers=handlers, concurrency=1, interval=0.2)
        async with anyio.create_task_group() as group:
            group.start_soon(worker.run)
            await started.wait()
            # each refused try is a debug line; the outage itself one warning
            with caplog.at_level(logging.DEBUG, logger="aqless._worker"):
                async with reloading(server, client):
                    release.set()  # the code returns: its complete meets the loading server
                    await eventually(lambda: "LOADING" in caplog.text, 10, "complete refused")
            await eventually(lambda: worker.counters.completed == 1, 30, "the job completed")
            job = await client.jobs.get(jid)
            assert isinstance(job, aqless.Job)
            assert job.state == aqless.JobState.COMPLETE
            worker.stop()
        assert runs == [jid]  # it ran once: the outcome was not given up
