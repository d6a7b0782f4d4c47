"""Events and waiting through the Client: `client.events()`, `client.wait`, `job.wait`."""

from __future__ import annotations

import anyio
import pytest

import aqless

pytest_plugins = ["tests.client_fixtures"]


async def subscribers(client: aqless.Client) -> list[str]:
    """The server's connections that hold a (pattern) subscription."""
    return [
        str(connection.get("id"))
        for connection in await client.redis.client_list()
        if str(connection.get("sub", "0")) != "0" or str(connection.get("psub", "0")) != "0"
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
                    if seen[-1] == ("completed", "j2") and event.channel == "ql:log":
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


async def test_cancelling_the_loop_leaves_no_subscription(client: aqless.Client) -> None:
    async def consume() -> None:
        async for _ in client.events("log"):
            pass

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(consume)
        with anyio.fail_after(5):
            while not await subscribers(client):  # noqa: ASYNC110 - waiting for the server
                await anyio.sleep(0.01)
        await client.queues["q"].put("Klass", {})
        tasks.cancel_scope.cancel()
    assert await subscribers(client) == []


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
