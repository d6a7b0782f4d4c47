"""Pickup without a poll: an idle worker listens to put events and pops at once; a full
worker does not listen."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

import anyio
import pytest

import aqless
from aqless import Handlers, Job, JobState
from tests.support.deployments import Deployment
from tests.support.worker import make_worker, one, running, until, until_state

pytestmark = pytest.mark.every_deployment


async def log_subscribers(deployment: Deployment, client: aqless.Client) -> int:
    return await deployment.subscribers(f"{client.prefix}log")


def listeners(
    deployment: Deployment, client: aqless.Client, expected: int
) -> Callable[[], Awaitable[bool]]:
    """Whether `expected` connections are subscribed to ql:log."""

    async def check() -> bool:
        return await log_subscribers(deployment, client) == expected

    return check


class Starts:
    """Job code that records when each job started, then waits for the gate."""

    def __init__(self) -> None:
        self.started: dict[str, float] = {}
        self.gate = anyio.Event()

    async def __call__(self, job: Job) -> None:
        self.started[job.jid] = time.monotonic()
        await self.gate.wait()


def starts_handlers() -> tuple[Handlers, Starts]:
    starts = Starts()
    return one(starts), starts


async def test_a_put_wakes_an_idle_worker(deployment: Deployment, client: aqless.Client) -> None:
    handlers, starts = starts_handlers()
    starts.gate.set()
    worker = make_worker(client, ["q"], handlers, interval=30)
    async with running(worker):
        await until(listeners(deployment, client, 1), what="the worker listens")
        await anyio.sleep(0.1)  # idle: its first pop came back empty
        put_at = time.monotonic()
        jid = await client.queues["q"].put("app.job")
        await until(lambda: jid in starts.started, timeout=1)
        assert starts.started[jid] - put_at < 1
        await until_state(client, jid, JobState.COMPLETE)
        second = await client.queues["q"].put("app.job")  # again, once idle again
        await until(lambda: second in starts.started, timeout=1)


async def test_a_put_into_another_queue_does_not_matter(
    deployment: Deployment, client: aqless.Client
) -> None:
    handlers, starts = starts_handlers()
    worker = make_worker(client, ["q"], handlers, interval=30)
    async with running(worker):
        await until(listeners(deployment, client, 1), what="the worker listens")
        await client.queues["elsewhere"].put("app.job")
        await anyio.sleep(0.2)
        assert starts.started == {}
        assert worker.counters.started == 0


async def test_an_advanced_job_wakes_an_idle_worker(
    deployment: Deployment, client: aqless.Client, other: aqless.Client
) -> None:
    handlers, starts = starts_handlers()
    starts.gate.set()
    jid = await other.queues["first"].put("app.job")
    worker = make_worker(client, ["second"], handlers, interval=30)
    async with running(worker):
        await until(listeners(deployment, client, 1), what="the worker listens")
        job = await other.queues["first"].pop()
        assert job is not None
        advanced_at = time.monotonic()
        await job.complete("second")
        await until(lambda: jid in starts.started, timeout=1)
        assert starts.started[jid] - advanced_at < 1
        await until_state(client, jid, JobState.COMPLETE)


async def test_a_full_worker_does_not_listen(deployment: Deployment, client: aqless.Client) -> None:
    handlers, starts = starts_handlers()
    for _ in range(3):
        await client.queues["q"].put("app.job")
    worker = make_worker(client, ["q"], handlers, concurrency=2, interval=30)
    async with running(worker):
        await until(lambda: len(starts.started) == 2)
        await until(lambda: len(worker.running) == 2)
        await until(listeners(deployment, client, 0), what="unsubscribed while full")
        await anyio.sleep(0.2)
        assert await log_subscribers(deployment, client) == 0
        starts.gate.set()  # all three finish; then it is idle and listens again
        await until(lambda: len(starts.started) == 3)
        await until(lambda: not worker.running)
        await until(listeners(deployment, client, 1), what="listens when idle")
