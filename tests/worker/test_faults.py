"""Connections killed under a running worker (CLIENT KILL from another connection), or gone
silent (neither answering nor closed): no job is lost, put events and worker events come
back."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import pytest
import redis.asyncio as aioredis

import aqless
from aqless import Job, JobState
from tests.support.blackhole_proxy import BlackholeProxy
from tests.support.worker import (
    WORKER,
    Recorder,
    all_complete,
    get_job,
    history_of,
    make_worker,
    one,
    running,
    sleeping,
    until,
    until_state,
)


@pytest.fixture
async def killer(server_url: str) -> AsyncIterator[aioredis.Redis]:
    """A connection of the test's own, which kills the others (SKIPME yes: not itself)."""
    connection = aioredis.Redis.from_url(server_url, decode_responses=True)
    try:
        yield connection
    finally:
        await connection.aclose()


async def kill(killer: aioredis.Redis, kind: str) -> int:
    return int(await killer.client_kill_filter(_type=kind, skipme=True))


async def listening(server: aioredis.Redis, channels: tuple[str, ...]) -> bool:
    """Whether every channel has a subscriber (the server's own count, PUBSUB NUMSUB)."""
    return all(count > 0 for _, count in await server.pubsub_numsub(*channels))


async def test_killed_connections_lose_no_job(
    client: aqless.Client, killer: aioredis.Redis
) -> None:
    await client.config.set("q-heartbeat", 1)
    ran: list[str] = []

    async def works(job: Job) -> None:
        ran.append(job.jid)
        await anyio.sleep(0.05 * (job.data["n"] % 5))

    jids = [await client.queues["q"].put("app.job", {"n": n}) for n in range(60)]
    worker = make_worker(client, ["q"], one(works), concurrency=8)
    async with running(worker):
        for stage, kind in enumerate(("normal", "pubsub", "normal", "pubsub")):
            await until(lambda: worker.counters.completed >= 10 * stage + 5)  # noqa: B023
            assert await kill(killer, kind) >= 1
        await all_complete(client, jids, timeout=20)
    assert worker.counters.completed == 60
    assert worker.counters.lost == 0
    assert sorted(ran) == sorted(jids)  # each job's code ran once
    # a pop whose reply died with its connection took jobs the worker never heard of: it
    # takes them back (a new attempt, `taken-back`); a lock that expired would show a
    # second `popped`
    for job in await client.jobs.get_many(jids):
        assert history_of(job) in (HANDED_OUT_ONCE, TAKEN_BACK), job.history


HANDED_OUT_ONCE = ["put", "popped", "done"]
TAKEN_BACK = ["put", "popped", "taken-back", "done"]


async def test_put_events_come_back_after_a_kill(
    client: aqless.Client, killer: aioredis.Redis
) -> None:
    recorder = Recorder()
    worker = make_worker(client, ["q"], one(recorder), interval=30)
    channels = ("ql:log", f"ql:w:{worker.name}")
    async with running(worker):
        await until(lambda: listening(killer, channels), what="the worker listens")
        assert await kill(killer, "pubsub") >= 2
        await until(lambda: listening(killer, channels), what="the worker resubscribed")
        jid = await client.queues["q"].put("app.job")
        await until(lambda: jid in recorder.jids, timeout=2)


async def test_a_cancel_during_a_kill_still_stops_the_job(
    client: aqless.Client, killer: aioredis.Redis
) -> None:
    """The cancel event is published while the worker's channel is down: after the
    reconnection the worker heartbeats every job, is refused, and cancels the code."""
    async with sleeping(client) as (worker, sleeper, jid):
        assert await kill(killer, "pubsub") >= 1
        await (await get_job(client, jid)).cancel()
        await until(lambda: not worker.running, timeout=3)
    assert sleeper.cancelled_at is not None
    assert worker.counters.lost == 1
    assert await client.jobs.get(jid) is None


async def test_a_job_finishing_while_connections_die_is_reported(
    client: aqless.Client, killer: aioredis.Redis
) -> None:
    gate = anyio.Event()

    async def gated(job: Job) -> None:
        await gate.wait()

    jid = await client.queues["q"].put("app.job")
    worker = make_worker(client, ["q"], one(gated))
    async with running(worker):
        await until(lambda: len(worker.running) == 1)
        assert await kill(killer, "normal") >= 1
        gate.set()
        job = await until_state(client, jid, JobState.COMPLETE)
    assert history_of(job) == ["put", "popped", "done"]


@pytest.mark.deployments(
    "valkey9",
    reason="the silence is the proxy's and the reconnection the client's: the same whatever "
    "the server, and 7 s of real waiting",
)
async def test_a_heartbeat_without_reply_reconnects_before_the_lock_expires(
    server_url: str, client: aqless.Client
) -> None:
    """The worker's connections go silent (the server neither answers nor closes them): the
    renewal due gives up on its connection in time and renews the lock over a new one."""
    await client.config.set("q-heartbeat", 3)
    jid = await client.queues["q"].put("app.job")
    started, release = anyio.Event(), anyio.Event()

    async def works(job: Job) -> None:
        started.set()
        await release.wait()

    async with (
        BlackholeProxy(server_url) as proxy,
        aqless.Client(proxy.url, worker_name=WORKER) as through_proxy,
    ):
        worker = make_worker(through_proxy, ["q"], one(works), interval=1)
        # its stop meets silenced connections too (each bounded: its record's withdrawal 2 s)
        async with running(worker, timeout=20):
            await started.wait()
            renewed_before = worker.heartbeats.renewals
            assert proxy.silence() >= 2
            await until(lambda: worker.heartbeats.renewals > renewed_before, timeout=4)
            job = await get_job(client, jid)
            assert job.state == JobState.RUNNING
            assert job.worker_name == WORKER
            release.set()
            await until_state(client, jid, JobState.COMPLETE, timeout=5)
        assert worker.counters.lost == 0
        assert worker.counters.completed == 1
