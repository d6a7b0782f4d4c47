"""around_perform hooks: context managers and wrappers, the worker's outermost, the
handler's inside; what a hook raises is the job's outcome."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

import aqless
from aqless import ConfigurationError, Job, JobState
from aqless._worker.middleware import Perform
from tests.support.worker import one, process

# Hooks run in the worker's process, whatever the server: the two unix kinds only (what
# differs by kind is tested on every kind in test_running, test_pushes...).

Log = list[str]


def context_hook(log: Log, name: str) -> Any:
    @asynccontextmanager
    async def hook(job: Job) -> AsyncIterator[None]:
        log.append(f"{name} enter {job.queue_name}")
        try:
            yield
        finally:
            log.append(f"{name} exit")

    return hook


def wrapper_hook(log: Log, name: str) -> Any:
    async def hook(job: Job, perform: Perform) -> Any:
        log.append(f"{name} before")
        result = await perform()
        log.append(f"{name} after {result!r}")
        return result

    return hook


async def test_worker_hooks_outermost_then_the_handlers(client: aqless.Client) -> None:
    log: Log = []

    async def job_code(job: Job) -> str:
        log.append("job")
        return "result"

    handlers = one(
        job_code,
        middleware=[wrapper_hook(log, "handler-wrapper"), context_hook(log, "handler-cm")],
    )
    worker_hooks = [context_hook(log, "worker-cm"), wrapper_hook(log, "worker-wrapper")]
    job = await process(client, handlers, "app.job", middleware=worker_hooks)
    assert job.state == JobState.COMPLETE
    assert log == [
        "worker-cm enter q",
        "worker-wrapper before",
        "handler-wrapper before",
        "handler-cm enter q",
        "job",
        "handler-cm exit",
        "handler-wrapper after 'result'",
        "worker-wrapper after 'result'",
        "worker-cm exit",
    ]


async def test_hooks_run_around_sync_code(client: aqless.Client) -> None:
    log: Log = []

    def job_code(job: Job) -> None:
        log.append("job")

    job = await process(
        client, one(job_code), "app.job", middleware=[context_hook(log, "worker-cm")]
    )
    assert job.state == JobState.COMPLETE
    assert log == ["worker-cm enter q", "job", "worker-cm exit"]


class SessionError(Exception):
    pass


@asynccontextmanager
async def refuses(job: Job) -> AsyncIterator[None]:
    if job.jid:  # always: the session cannot be opened
        raise SessionError("no database")
    yield


@asynccontextmanager
async def breaks_after(job: Job) -> AsyncIterator[None]:
    yield
    raise SessionError("commit failed")


async def wrapper_refuses(job: Job, perform: Perform) -> Any:
    raise SessionError("no span")


@pytest.mark.parametrize("hook", [refuses, breaks_after, wrapper_refuses])
async def test_a_hook_that_raises_fails_the_job(client: aqless.Client, hook: Any) -> None:
    ran: list[str] = []

    async def job_code(job: Job) -> None:
        ran.append(job.jid)

    job = await process(client, one(job_code), "app.job", middleware=[hook])
    assert job.state == JobState.FAILED
    assert job.failure is not None
    assert job.failure.group == "q-SessionError"
    assert "SessionError" in job.failure.message
    assert len(ran) == (1 if hook is breaks_after else 0)


async def test_a_hook_sees_the_job_code_raise(client: aqless.Client) -> None:
    log: Log = []

    async def job_code(job: Job) -> None:
        raise ValueError("bad")

    job = await process(client, one(job_code, middleware=[context_hook(log, "cm")]), "app.job")
    assert job.failure is not None
    assert job.failure.group == "q-ValueError"
    assert log == ["cm enter q", "cm exit"]


def test_a_hook_of_the_wrong_shape_is_refused(client: aqless.Client) -> None:
    async def three(job: Job, perform: Perform, extra: int) -> None:
        pass

    with pytest.raises(ConfigurationError, match="must take"):
        aqless.Worker(client, ["q"], middleware=[three])  # type: ignore[list-item]
