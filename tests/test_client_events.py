"""Events and waiting through the Client: `client.events()`, `client.wait`, `job.wait`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
import pytest

import aqless
from tests.support.clients import ManualClock
from tests.support.deployments import Deployment

pytest_plugins = ["tests.support.client_fixtures"]
pytestmark = pytest.mark.every_deployment


async def subscribers(deployment: Deployment) -> list[str]:
    """The connections that hold a (pattern) subscription, on every node (but a sentinel's
    own, on its hello channel)."""
    return [
        line
        for listing in await deployment.on_every_node("CLIENT", "LIST")
        for line in str(listing).splitlines()
        if (" sub=0 " not in line or " psub=0 " not in line) and " name=sentinel-" not in line
    ]


async def test_a_consumer_sees_every_event_of_tracked_jobs_in_order(
    client: aqless.Client,
) -> None:
    queue = client.queues["q"]
    seen: list[tuple[str, str | None]] = []
    async with client.events() as events:

        async def produce() -> None:
            for n in range(3):
                jid = await queue.put("Klass", {"n": n}, jid=f"j{n}")
                job = await client.jobs.get(jid)
                assert isinstance(job, aqless.Job)
                await job.track()
                popped = await queue.pop()
                assert popped is not None
                await popped.complete()

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(produce)
                async for event in events:
                    seen.append((event.kind, event.jid))
                    if seen[-1] == ("completed", "j2") and event.channel == f"{client.prefix}log":
                        break
    expected: list[tuple[str, str | None]] = []
    for n in range(3):
        jid = f"j{n}"
        expected += [
            ("put", jid),
            ("track", jid),
            ("popped", jid),
            ("completed", jid),
            ("completed", jid),
        ]
    assert seen == expected


async def test_cancelling_the_loop_leaves_no_subscription(
    deployment: Deployment, client: aqless.Client
) -> None:
    async def consume() -> None:
        async for _ in client.events("log"):
            pass

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(consume)
        with anyio.fail_after(5):
            while not await subscribers(deployment):  # noqa: ASYNC110 - waiting for the server
                await anyio.sleep(0.01)
        await client.queues["q"].put("Klass", {})
        tasks.cancel_scope.cancel()
    assert await subscribers(deployment) == []


async def test_wait_returns_the_final_state(client: aqless.Client) -> None:
    queue = client.queues["q"]
    jid = await queue.put("Klass", {})

    async def finish() -> None:
        job = await queue.pop()
        assert job is not None
        await job.complete()

    async with anyio.create_task_group() as tasks:
        job = await client.jobs.get(jid)
        assert isinstance(job, aqless.Job)
        tasks.start_soon(finish)
        with anyio.fail_after(10):
            assert await job.wait(timeout=10) is aqless.JobState.COMPLETE


async def test_wait_times_out(client: aqless.Client) -> None:
    jid = await client.queues["q"].put("Klass", {})
    with pytest.raises(TimeoutError):
        await client.wait(jid, timeout=0.05)


async def test_wait_for_a_cancelled_job_is_none(client: aqless.Client) -> None:
    jid = await client.queues["q"].put("Klass", {})
    job = await client.jobs.get(jid)
    assert isinstance(job, aqless.Job)
    await job.cancel()
    assert await client.wait(jid, timeout=5) is None


async def waiting_for(
    deployment: Deployment, client: aqless.Client, jid: str, finish: Callable[[], Awaitable[None]]
) -> object:
    """What `client.wait(jid)` returns when `finish()` runs once the wait has subscribed."""
    async with anyio.create_task_group() as tasks:
        result: list[object] = []

        async def wait() -> None:
            result.append(await client.wait(jid, timeout=10))

        tasks.start_soon(wait)
        with anyio.fail_after(10):
            while not await subscribers(deployment):  # noqa: ASYNC110 - waiting for the server
                await anyio.sleep(0.01)
        await finish()
    return result[0]


async def test_wait_sees_a_retry_with_no_retries_left_fail_the_job(
    deployment: Deployment, client: aqless.Client
) -> None:
    # the (reqless) retry command publishes nothing when it fails a job: no event to wait for
    queue = client.queues["q"]
    jid = await queue.put("Klass", {}, retries=0)
    job = await queue.pop()
    assert job is not None

    async def retry() -> None:
        assert await job.retry() == -1

    assert await waiting_for(deployment, client, jid, retry) is aqless.JobState.FAILED


async def test_wait_sees_a_job_failed_by_lock_expiry_with_no_retries_left(
    deployment: Deployment, timed_client: aqless.Client, clock: ManualClock
) -> None:
    client = timed_client
    await client.config.set("grace-period", 0)
    queue = client.queues["q"]
    jid = await queue.put("Klass", {}, retries=0)
    assert await queue.pop() is not None

    async def expire() -> None:
        clock.advance(61)  # past the lock's expiry: the next pop reclaims the job, and fails it
        assert await queue.pop(worker="worker-2") is None

    assert await waiting_for(deployment, client, jid, expire) is aqless.JobState.FAILED
    job = await client.jobs.get(jid)
    assert isinstance(job, aqless.Job)
    assert job.failure is not None
    assert job.failure.group == "failed-retries-q"  # failed by the reclaim, not by a worker


@pytest.mark.parametrize("retries", [0, 1])
async def test_wait_for_a_job_that_already_failed(client: aqless.Client, retries: int) -> None:
    queue = client.queues["q"]
    jid = await queue.put("Klass", {}, retries=retries)
    job = await queue.pop()
    assert job is not None
    if retries:
        await job.fail("group", "message")
    else:
        assert await job.retry() == -1
    assert await client.wait(jid, timeout=5) is aqless.JobState.FAILED
    assert await job.wait(timeout=5) is aqless.JobState.FAILED


async def test_wait_for_a_job_that_already_completed(client: aqless.Client) -> None:
    queue = client.queues["q"]
    jid = await queue.put("Klass", {})
    job = await queue.pop()
    assert job is not None
    await job.complete()
    assert await client.wait(jid, timeout=5) is aqless.JobState.COMPLETE
    assert await job.wait(timeout=5) is aqless.JobState.COMPLETE
