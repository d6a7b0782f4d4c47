"""Running jobs: never more than `concurrency` at once, sync code off the loop, heartbeats
that keep every lock, and job code cancelled as soon as its job is taken away."""

from __future__ import annotations

import threading
import time
from typing import Any

import anyio
import pytest

import aqless
from aqless import Handlers, Job, JobState
from tests.support.deployments import Deployment
from tests.support.worker import (
    Gate,
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

# Lock renewal and loss differ by kind (heartbeats over its connection, the loss told on the
# worker's channel): those tests run on every kind. Counting slots and running sync code off
# the loop are the worker's own, on the two unix kinds.


async def test_never_more_jobs_than_slots(client: aqless.Client) -> None:
    gate = Gate()
    handlers = one(gate)
    jids = [await client.queues[q].put("app.job") for q in ("a", "b") for _ in range(12)]
    worker = make_worker(client, ["a", "b"], handlers, concurrency=5)
    async with running(worker):
        await until(lambda: gate.inside == 5)
        await anyio.sleep(0.3)  # a worker that popped too many would have done so by now
        (held,) = await client.workers.counts()
        assert (held.name, held.jobs) == (client.worker_name, 5)
        assert (await client.queues["a"].counts()).running == 5
        assert (await client.queues["a"].counts()).waiting == 7
        assert len(worker.running) == 5
        gate.open.set()
        await all_complete(client, jids)
    assert gate.most == 5
    assert worker.counters.completed == 24


async def test_the_server_never_sees_more_jobs_held_than_slots(
    client: aqless.Client, other: aqless.Client
) -> None:
    """Pops ride behind the outcomes that free their slots: sampled from another client
    while quick jobs drain, the worker's job list never exceeds its concurrency."""

    async def quick(job: Job) -> None:
        await anyio.sleep(0.001 * (hash(job.jid) % 3))

    jids = [await client.queues["q"].put("app.job") for _ in range(400)]
    worker = make_worker(client, ["q"], one(quick), concurrency=4)
    held: list[int] = []
    key = f"ql:w:{client.worker_name}:jobs"
    async with running(worker):
        while worker.counters.completed < len(jids):
            held.append(await other.redis.zcard(key))
    await all_complete(client, jids)
    assert len(held) > 50, "too few samples to tell"
    assert max(held) <= 4, held


async def test_sync_job_does_not_block_the_loop(client: aqless.Client) -> None:
    release = threading.Event()
    handlers = Handlers()

    @handlers.register("app.blocking")
    def blocking(job: Job) -> None:
        assert release.wait(10), "never released"

    @handlers.register("app.quick")
    async def quick(job: Job) -> None:
        await anyio.sleep(0.01)

    queue = client.queues["q"]
    blocked = await queue.put("app.blocking")
    worker = make_worker(client, ["q"], handlers, concurrency=2)
    try:
        async with running(worker):
            await until(lambda: worker.counters.started == 1)
            quick_jid = await queue.put("app.quick")
            await until_state(client, quick_jid, JobState.COMPLETE)
            assert await client.jobs.get(blocked) is not None
            assert (await get_job(client, blocked)).state == JobState.RUNNING
            release.set()
            await until_state(client, blocked, JobState.COMPLETE)
    finally:
        release.set()


@pytest.mark.every_deployment  # heartbeats over each kind's connection
async def test_a_long_job_never_stalls(client: aqless.Client) -> None:
    await client.config.set("q-heartbeat", 1)
    handlers = Handlers()

    @handlers.register("app.long")
    async def long(job: Job) -> None:
        await anyio.sleep(2)  # two lock lengths: about six renewals, one every 1/3 s

    jid = await client.queues["q"].put("app.long")
    worker = make_worker(client, ["q"], handlers)
    async with running(worker):
        job = await until_state(client, jid, JobState.COMPLETE, timeout=8)
    assert history_of(job) == ["put", "popped", "done"]
    assert job.retries_left == job.original_retries
    assert worker.counters.lost == 0
    assert worker.heartbeats.refusals == 0
    # renewed (about six times, one every third of the lock; fewer when a loaded machine
    # delays the renewals' wake-ups, which the margin of the lock absorbs)
    assert worker.heartbeats.renewals >= 1


@pytest.mark.deployments("valkey9", reason="counts round trips: one kind is enough")
async def test_renewals_are_batched(client: aqless.Client, monkeypatch: pytest.MonkeyPatch) -> None:
    await client.config.set("q-heartbeat", 1)
    protocol = client.protocol
    round_trips = 0
    many = protocol.many

    async def counting(command: str, calls: Any) -> Any:
        nonlocal round_trips
        if command == "job.heartbeat":
            round_trips += 1
        return await many(command, calls)

    monkeypatch.setattr(protocol, "many", counting)
    handlers = Handlers()

    @handlers.register("app.sleeps")
    async def sleeps(job: Job) -> None:
        await anyio.sleep(2)

    jids = [await client.queues["q"].put("app.sleeps") for _ in range(20)]
    worker = make_worker(client, ["q"], handlers, concurrency=20)
    async with running(worker):
        await all_complete(client, jids)
    assert worker.counters.lost == 0
    assert (
        worker.heartbeats.renewals >= 20 * 2
    )  # every 1/3 s of 2 s: 6 each when idle, fewer when busy
    assert round_trips * 5 <= worker.heartbeats.renewals, (round_trips, worker.heartbeats.renewals)


@pytest.mark.every_deployment  # the cancel is told on the worker's channel
async def test_cancelling_a_running_job_cancels_its_code(client: aqless.Client) -> None:
    async with sleeping(client) as (worker, sleeper, jid):
        cancelled_at = time.monotonic()
        await (await get_job(client, jid)).cancel()
        await until(lambda: not worker.running, timeout=1)
    assert sleeper.cancelled_at is not None
    assert sleeper.cancelled_at - cancelled_at < 1
    assert await client.jobs.get(jid) is None
    assert worker.counters.lost == 1
    assert (worker.counters.completed, worker.counters.failed) == (0, 0)


@pytest.mark.every_deployment  # the timeout is told on the worker's channel
async def test_a_job_timed_out_from_outside_is_lost(
    client: aqless.Client, other: aqless.Client
) -> None:
    async with sleeping(client) as (worker, sleeper, jid):
        worker.pause()  # so that it does not take the stalled job again
        timed_out_at = time.monotonic()
        await (await get_job(client, jid)).timeout()
        await until(lambda: not worker.running, timeout=1)
        assert sleeper.cancelled_at is not None
        assert sleeper.cancelled_at - timed_out_at < 1
        assert worker.counters.lost == 1
        taken = await other.queues["q"].pop()
        assert taken is not None
        assert taken.jid == jid
        await taken.complete()
    assert (worker.counters.completed, worker.counters.failed) == (0, 0)
    job = await get_job(client, jid)
    assert job.state == JobState.COMPLETE
    assert [e.details.get("worker") for e in job.history if e.what == "popped"] == [
        client.worker_name,
        "other-worker",
    ]


@pytest.mark.every_deployment  # the loss is told on the worker's channel
async def test_a_job_whose_lock_expired_is_lost(
    deployment: Deployment, client: aqless.Client
) -> None:
    """Another worker whose clock is ahead sees the lock expired and takes the job: the
    server tells this worker, which cancels the code and reports nothing."""
    await client.config.set("q-heartbeat", 1)
    await client.config.set("grace-period", 0)  # the first pop after expiry reclaims
    async with sleeping(client) as (worker, sleeper, jid):
        worker.pause()
        ahead = deployment.open_client(worker_name="ahead", clock=lambda: time.time() + 30)
        async with ahead:
            taken = await ahead.queues["q"].pop()
            assert taken is not None
            await until(lambda: not worker.running, timeout=1)
            await taken.complete()
    assert sleeper.cancelled_at is not None
    assert worker.counters.lost == 1
    assert (worker.counters.completed, worker.counters.failed) == (0, 0)
    job = await get_job(client, jid)
    assert job.state == JobState.COMPLETE
    assert job.failure is None
