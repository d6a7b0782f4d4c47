"""Helpers for the worker's tests: run a Worker in a task of the test, wait for conditions
with a deadline (a hang fails the test instead of blocking it), and read jobs back."""

from __future__ import annotations

import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio

import aqless
from aqless import Job, JobState, Worker, WorkerCounters
from aqless.events import Event

WORKER = "test-worker"

Condition = Callable[[], bool | Awaitable[bool]]


class Running:
    """A worker running in a task: ``stopped()`` waits for ``run()`` to return."""

    def __init__(self, worker: Worker) -> None:
        self.worker = worker
        self.done = anyio.Event()
        self.counters: WorkerCounters | None = None

    async def _run(self) -> None:
        try:
            self.counters = await self.worker.run()
        finally:
            self.done.set()

    async def stopped(self, *, timeout: float = 10) -> WorkerCounters:
        """Wait for the worker to return (stop it first); returns its counters."""
        with anyio.fail_after(timeout):
            await self.done.wait()
        assert self.counters is not None, "the worker's run raised"
        return self.counters


@asynccontextmanager
async def running(worker: Worker, *, timeout: float = 10) -> AsyncIterator[Running]:
    """Run `worker` while the block runs; on exit stop it at once (two stops) and wait."""
    run = Running(worker)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(run._run)
        await until(lambda: worker.state != "new")
        try:
            yield run
        finally:
            if not run.done.is_set():
                worker.stop()
                worker.stop()
            with anyio.fail_after(timeout):
                await run.done.wait()


def make_worker(
    client: aqless.Client,
    queues: Sequence[str] = ("q",),
    handlers: aqless.Handlers | None = None,
    **options: Any,
) -> Worker:
    """A worker with short timings: it polls every 0.2 s unless told otherwise."""
    options.setdefault("interval", 0.2)
    options.setdefault("grace", 5.0)
    return Worker(client, list(queues), handlers=handlers, **options)


async def until(condition: Condition, *, timeout: float = 5, what: str = "") -> None:
    """Wait until `condition()` (sync or async) is true; fail after `timeout` seconds."""
    try:
        with anyio.fail_after(timeout):
            while True:
                result = condition()
                if inspect.isawaitable(result):
                    result = await result
                if result:
                    return
                await anyio.sleep(0.01)
    except TimeoutError:
        raise AssertionError(f"not true within {timeout} s: {what or condition}") from None


async def get_job(client: aqless.Client, jid: str) -> Job:
    job = await client.jobs.get(jid)
    assert isinstance(job, Job), f"no job {jid}: {job!r}"
    return job


async def state_of(client: aqless.Client, jid: str) -> JobState | str | None:
    job = await client.jobs.get(jid)
    return job.state if isinstance(job, Job) else None


async def until_state(
    client: aqless.Client, jid: str, *states: JobState, timeout: float = 5
) -> Job:
    """Wait until the job is in one of `states`; returns it."""

    async def reached() -> bool:
        return await state_of(client, jid) in states

    await until(reached, timeout=timeout, what=f"job {jid} {'/'.join(states)}")
    return await get_job(client, jid)


async def all_complete(client: aqless.Client, jids: Sequence[str], *, timeout: float = 10) -> None:
    """Wait until every job is complete."""

    async def done() -> bool:
        return all(job.state == JobState.COMPLETE for job in await client.jobs.get_many(jids))

    await until(done, timeout=timeout, what=f"{len(jids)} jobs complete")


def history_of(job: Job) -> list[str]:
    """The `what` of each history entry, oldest first."""
    return [entry.what for entry in job.history]


FINISHED = (JobState.COMPLETE, JobState.FAILED)


async def process(
    client: aqless.Client,
    handlers: aqless.Handlers,
    klass: str,
    data: Any = None,
    *,
    queue: str = "q",
    queues: Sequence[str] | None = None,
    states: Sequence[JobState] = FINISHED,
    timeout: float = 5,
    **options: Any,
) -> Job:
    """Put one job, run a worker until the job reaches one of `states`; returns the job."""
    jid = await client.queues[queue].put(klass, data)
    worker = make_worker(client, queues or [queue], handlers, **options)
    async with running(worker):
        return await until_state(client, jid, *states, timeout=timeout)


@asynccontextmanager
async def collecting(client: aqless.Client, *channels: str) -> AsyncIterator[list[Event]]:
    """The events published on `channels` while the block runs (subscribed before it)."""
    events: list[Event] = []
    async with client.events(*channels) as stream, anyio.create_task_group() as tasks:

        async def read() -> None:
            async for event in stream:
                events.append(event)

        tasks.start_soon(read)
        yield events
        tasks.cancel_scope.cancel()


def one(function: Callable[[Job], Any], klass: str = "app.job", **options: Any) -> aqless.Handlers:
    """A registry with `function` registered under `klass` (options: timeout, middleware)."""
    handlers = aqless.Handlers()
    handlers.register(klass, **options)(function)
    return handlers


class Recorder:
    """Job code that records the jid and queue of every job it runs, in order."""

    def __init__(self) -> None:
        self.jids: list[str] = []
        self.queues: list[str] = []

    async def __call__(self, job: Job) -> None:
        self.jids.append(job.jid)
        self.queues.append(job.queue_name)


class Gate:
    """Job code that waits until the test opens the gate (or, given `seconds`, that long);
    counts who is inside, and the most at once."""

    def __init__(self, seconds: float | None = None) -> None:
        self.open = anyio.Event()
        self.seconds = seconds
        self.inside = 0
        self.most = 0
        self.entered: list[str] = []

    async def __call__(self, job: Job) -> None:
        self.inside += 1
        self.most = max(self.most, self.inside)
        self.entered.append(job.jid)
        try:
            if self.seconds is None:
                await self.open.wait()
            else:
                await anyio.sleep(self.seconds)
        finally:
            self.inside -= 1


class Sleeper:
    """Job code that sleeps until cancelled; remembers when it started and was cancelled."""

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.cancelled_at: float | None = None

    async def __call__(self, job: Job) -> None:
        self.started.set()
        try:
            await anyio.sleep(60)
        except anyio.get_cancelled_exc_class():
            self.cancelled_at = time.monotonic()
            raise


@asynccontextmanager
async def sleeping(
    client: aqless.Client, **options: Any
) -> AsyncIterator[tuple[Worker, Sleeper, str]]:
    """A worker running a job (its jid) that sleeps until cancelled."""
    sleeper = Sleeper()
    jid = await client.queues["q"].put("app.job")
    worker = make_worker(client, ["q"], one(sleeper), **options)
    async with running(worker):
        with anyio.fail_after(5):
            await sleeper.started.wait()
        yield worker, sleeper, jid
