"""`aqless.testing.perform` / `Worker.perform`: one popped job's code run outside a worker's
loop, its outcome reported as the worker reports it (qless's `job.perform`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

import aqless
from aqless import Handlers, Job, JobState, Retry
from aqless.testing import perform

# One job's code run outside a worker: the same calls on every kind, so the two unix kinds
# only (what differs by kind is tested on every kind in test_running, test_pushes...).


async def popped(client: aqless.Client, klass: str = "app.Welcome", retries: int = 5) -> Job:
    queue = client.queues["emails"]
    await queue.put(klass, {"user": 42}, retries=retries)
    job = await queue.pop()
    assert job is not None
    return job


async def stored(client: aqless.Client, job: Job) -> Job:
    fresh = await client.jobs.get(job.jid)
    assert isinstance(fresh, Job)
    return fresh


async def test_a_job_whose_code_returns_completes(client: aqless.Client) -> None:
    handlers = Handlers()
    seen: list[object] = []

    @handlers.register("app.Welcome")
    async def welcome(job: Job) -> None:
        seen.append(job.data["user"])

    job = await popped(client)
    assert await perform(job, handlers) == "completed"
    assert seen == [42]
    assert job.state == JobState.COMPLETE
    assert (await stored(client, job)).state == JobState.COMPLETE


async def test_a_job_whose_code_raises_fails_as_in_a_worker(client: aqless.Client) -> None:
    handlers = Handlers()

    @handlers.register("app.Welcome")
    def welcome(job: Job) -> None:  # plain functions run in a thread, as in a worker
        raise ValueError("no such user")

    job = await popped(client)
    assert await perform(job, handlers) == "failed"
    fresh = await stored(client, job)
    assert fresh.state == JobState.FAILED
    assert fresh.failure is not None
    assert fresh.failure.group == "emails-ValueError"
    assert "no such user" in fresh.failure.message


async def test_retry_and_backoff_retry_the_job(client: aqless.Client) -> None:
    handlers = Handlers()

    @handlers.register("app.Welcome")
    async def welcome(job: Job) -> None:
        raise Retry(delay=60)

    job = await popped(client)
    assert await perform(job, handlers) == "retried"
    fresh = await stored(client, job)
    assert (fresh.state, fresh.retries_left) == (JobState.SCHEDULED, 4)

    # with no retries left the worker's rule applies too: the job fails
    job = await popped(client, retries=0)
    assert await perform(job, handlers) == "failed"
    assert (await stored(client, job)).state == JobState.FAILED


async def test_the_middleware_runs_around_the_code(client: aqless.Client) -> None:
    calls: list[str] = []

    @asynccontextmanager
    async def around(job: Job) -> AsyncIterator[None]:
        calls.append("before")
        yield
        calls.append("after")

    handlers = Handlers()

    @handlers.register("app.Welcome", middleware=[around])
    async def welcome(job: Job) -> None:
        calls.append("code")

    job = await popped(client)
    assert await perform(job, handlers) == "completed"
    assert calls == ["before", "code", "after"]


async def test_an_unknown_class_fails_the_job_and_imports_nothing(client: aqless.Client) -> None:
    job = await popped(client, klass="os.system")
    assert await perform(job) == "failed"
    fresh = await stored(client, job)
    assert fresh.failure is not None
    assert "not allowed" in fresh.failure.message


async def test_a_built_job_cannot_be_performed() -> None:
    with pytest.raises(aqless.ConfigurationError, match="without a client"):
        await perform(Job.build("app.Welcome"), Handlers())
