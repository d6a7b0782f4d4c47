"""How the end of a job's code becomes complete, fail or retry: exceptions, Retry, Backoff,
timeouts, job code that settles its own job, and SystemExit."""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest

import aqless
from aqless import Backoff, Handlers, Job, JobState, Retry
from tests.support.worker import (
    collecting,
    get_job,
    history_of,
    make_worker,
    one,
    process,
    running,
    until,
    until_state,
)

# How job code's end becomes an outcome is decided in the worker and the script, the same on
# every kind of deployment: these tests run on the two unix kinds (Valkey 9 and Redis 7, so the
# Lua runs on both). The kinds differ in connections, pushes, events and lock renewal, tested
# on every kind in test_running, test_pushes, test_pickup, test_ears, test_lost_replies and
# tests/test_client_events.py.


def errors_logged(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


async def test_return_completes(client: aqless.Client) -> None:
    async def fine(job: Job) -> str:
        return "ignored"

    job = await process(client, one(fine), "app.job")
    assert job.state == JobState.COMPLETE
    assert history_of(job) == ["put", "popped", "done"]


async def test_exception_fails_with_type_group_and_traceback(client: aqless.Client) -> None:
    async def broken(job: Job) -> None:
        raise ValueError("the data is wrong")

    job = await process(client, one(broken), "app.job")
    assert job.state == JobState.FAILED
    assert job.failure is not None
    assert job.failure.group == "q-ValueError"
    assert job.failure.message.startswith("Traceback (most recent call last):")
    assert "in broken" in job.failure.message
    assert job.failure.message.rstrip().endswith("ValueError: the data is wrong")
    assert job.failure.worker == client.worker_name


async def test_retry_schedules_and_spends_a_retry(client: aqless.Client) -> None:
    async def later(job: Job) -> None:
        raise Retry(delay=60)

    job = await process(client, one(later), "app.job", states=[JobState.SCHEDULED])
    assert job.retries_left == job.original_retries - 1
    assert job.queue_name == "q"

    async def custom(job: Job) -> None:
        raise Retry(group="q-busy", message="the API is busy")

    jid = await client.queues["q"].put("app.job", None)
    async with running(make_worker(client, ["q"], one(custom), max_jobs=1)):
        # waiting from the put on: wait for the retry's mark instead (its failure)
        await until(lambda: failure_of(client, jid), what="the job retried")
    job = await get_job(client, jid)
    assert job.state == JobState.WAITING
    assert job.retries_left == job.original_retries - 1
    assert job.failure is not None
    assert (job.failure.group, job.failure.message) == ("q-busy", "the API is busy")


async def test_backoff_delays_grow_then_the_job_fails(client: aqless.Client) -> None:
    runs: list[float] = []

    async def flaky(job: Job) -> None:
        runs.append(anyio.current_time())
        raise ConnectionError("down")

    backoff = Backoff(base=0.1, factor=2, jitter=0)
    jid = await client.queues["q"].put("app.job", retries=3)
    async with collecting(client, "log") as events:
        worker = make_worker(client, ["q"], one(flaky), backoff=backoff, interval=0.02)
        async with running(worker):
            job = await until_state(client, jid, JobState.FAILED)
        await until(lambda: any(e.kind == "failed" and e.jid == jid for e in events))
    assert len(runs) == 4  # the first run and three retries
    gaps = [later - earlier for earlier, later in itertools.pairwise(runs)]
    for gap, delay in zip(gaps, (0.1, 0.2, 0.4), strict=True):
        assert gap >= delay * 0.9, gaps
    assert job.failure is not None
    assert job.failure.group == "failed-retries-q"
    assert "ConnectionError: down" in job.failure.message
    assert job.retries_left == 0
    assert worker.counters.retried == 3
    assert worker.counters.failed == 1
    failed = [e for e in events if e.kind == "failed" and e.jid == jid]
    assert failed[0].group == "failed-retries-q"


async def test_backoff_covers_only_its_exceptions(client: aqless.Client) -> None:
    async def broken(job: Job) -> None:
        raise KeyError("x")

    backoff = Backoff(base=60, on=(ConnectionError,))
    job = await process(client, one(broken), "app.job", backoff=backoff)
    assert job.state == JobState.FAILED
    assert job.failure is not None
    assert job.failure.group == "q-KeyError"


async def sleeps(job: Job) -> None:
    await anyio.sleep(30)


def sleeps_in_thread(job: Job) -> None:
    time.sleep(1)


@pytest.mark.parametrize(
    ("function", "handler_timeout", "worker_timeout"),
    [
        (sleeps, 0.2, None),
        (sleeps, None, 0.2),
        (sleeps, 0.2, 60),  # the handler's own timeout wins
        (sleeps_in_thread, 0.2, None),
    ],
)
async def test_timeout_fails_the_job(
    client: aqless.Client,
    function: Callable[[Job], Any],
    handler_timeout: float | None,
    worker_timeout: float | None,
) -> None:
    handlers = one(function, timeout=handler_timeout)
    with anyio.fail_after(3):
        job = await process(client, handlers, "app.job", job_timeout=worker_timeout)
    assert job.state == JobState.FAILED
    assert job.failure is not None
    assert job.failure.group == "q-JobTimeoutError"
    assert "ran past its timeout of 0.2 s" in job.failure.message


async def test_timeout_under_backoff_retries(client: aqless.Client) -> None:
    job = await process(
        client,
        one(sleeps, timeout=0.2),
        "app.job",
        backoff=Backoff(base=60),
        states=[JobState.SCHEDULED],
    )
    assert job.retries_left == job.original_retries - 1
    assert job.failure is not None
    assert job.failure.group == "q-JobTimeoutError"


# -- job code that settles its own job ---------------------------------------------------------


async def completes(job: Job) -> None:
    await job.complete()


async def advances(job: Job) -> None:
    await job.complete("next")


async def fails(job: Job) -> None:
    await job.fail("own-group", "said so")


async def retries(job: Job) -> None:
    await job.retry(60, "own-group", "later")


async def moves(job: Job) -> None:
    await job.move("elsewhere")


async def cancels(job: Job) -> None:
    await job.cancel()


def completes_in_thread(job: Job) -> None:
    anyio.from_thread.run(job.complete)


async def fails_then_raises(job: Job) -> None:
    await job.fail("own-group", "said so")
    raise RuntimeError("and then broke")


@pytest.mark.parametrize(
    ("function", "state", "history"),
    [
        (completes, JobState.COMPLETE, ["put", "popped", "done"]),
        (completes_in_thread, JobState.COMPLETE, ["put", "popped", "done"]),
        (advances, JobState.WAITING, ["put", "popped", "done", "put"]),
        (fails, JobState.FAILED, ["put", "popped", "failed"]),
        (fails_then_raises, JobState.FAILED, ["put", "popped", "failed"]),
        (retries, JobState.SCHEDULED, ["put", "popped"]),
        (moves, JobState.WAITING, ["put", "popped", "put"]),
        (cancels, None, None),
    ],
)
async def test_job_code_that_settles_its_job(
    client: aqless.Client,
    caplog: pytest.LogCaptureFixture,
    function: Callable[[Job], Awaitable[None]],
    state: JobState | None,
    history: list[str] | None,
) -> None:
    caplog.set_level(logging.INFO, logger="aqless")
    jid = await client.queues["q"].put("app.job")
    worker = make_worker(client, ["q"], one(function))
    async with running(worker) as run:
        await until(lambda: worker.counters.started == 1 and not worker.running)
        worker.stop()
        counters = await run.stopped()
    assert (counters.completed, counters.failed, counters.retried, counters.lost) == (0, 0, 0, 0)
    assert errors_logged(caplog) == []
    assert not [r for r in caplog.records if "could not" in r.getMessage()]
    found = await client.jobs.get(jid)
    if state is None:
        assert found is None
        return
    job = await get_job(client, jid)
    assert job.state == state
    assert [w for w in history_of(job) if w != "retry"] == history
    if state == JobState.FAILED:
        assert job.failure is not None
        assert job.failure.group == "own-group"


async def test_system_exit_fails_the_job_and_the_worker_goes_on(client: aqless.Client) -> None:
    handlers = Handlers()

    @handlers.register("app.exits")
    async def exits(job: Job) -> None:
        raise SystemExit(3)

    @handlers.register("app.exits_in_thread")
    def exits_in_thread(job: Job) -> None:
        raise SystemExit(4)

    @handlers.register("app.fine")
    async def fine(job: Job) -> None:
        pass

    queue = client.queues["q"]
    jids = [await queue.put(k) for k in ("app.exits", "app.exits_in_thread", "app.fine")]
    worker = make_worker(client, ["q"], handlers, concurrency=1)
    async with running(worker):
        first = await until_state(client, jids[0], JobState.FAILED)
        second = await until_state(client, jids[1], JobState.FAILED)
        await until_state(client, jids[2], JobState.COMPLETE)
        assert worker.state == "running"
    assert first.failure is not None
    assert first.failure.group == "q-SystemExit"
    assert second.failure is not None
    assert second.failure.group == "q-SystemExit"


async def test_data_that_cannot_be_sent_fails_the_job(client: aqless.Client) -> None:
    """Job code may change job.data, which complete sends: a value JSON cannot encode fails
    the job (and the worker goes on)."""
    handlers = Handlers()

    @handlers.register("app.spoils")
    async def spoils(job: Job) -> None:
        job.data = {"handle": object()}

    @handlers.register("app.fine")
    async def fine(job: Job) -> None:
        pass

    queue = client.queues["q"]
    spoiled, later = await queue.put("app.spoils"), await queue.put("app.fine")
    worker = make_worker(client, ["q"], handlers, concurrency=1)
    async with running(worker):
        job = await until_state(client, spoiled, JobState.FAILED)
        await until_state(client, later, JobState.COMPLETE)
    assert job.failure is not None
    assert job.failure.group == "q-PayloadError"
    assert "not JSON-serializable" in job.failure.message


@pytest.mark.parametrize(
    ("verb", "state"),
    [("complete", JobState.COMPLETE), ("fail", JobState.FAILED), ("retry", JobState.SCHEDULED)],
)
async def test_an_outcome_sent_twice_is_counted_once(
    client: aqless.Client, caplog: pytest.LogCaptureFixture, verb: str, state: JobState
) -> None:
    """A connection dropped after the script ran hides its reply, and redis-py sends the
    command again, which the server refuses: the worker reads the job and sees that its
    outcome went through. Simulated by a hook that sends the outcome behind its back."""

    async def behind_its_back(job: Job, perform: Any) -> None:
        other_copy = await get_job(client, job.jid)
        if verb == "complete":
            await other_copy.complete()
        elif verb == "fail":
            await other_copy.fail("q-ValueError", "sent once already")
            raise ValueError("boom")
        else:
            await other_copy.retry(60, "q-Retry", "sent once already")
            raise Retry(60)

    async def fine(job: Job) -> None:
        pass

    caplog.set_level(logging.WARNING, logger="aqless")
    job = await process(client, one(fine), "app.job", middleware=[behind_its_back], states=[state])
    refusals = [r.getMessage() for r in caplog.records if "could not" in r.getMessage()]
    assert refusals == []
    assert job.state == state


async def failure_of(client: aqless.Client, jid: str) -> bool:
    job = await get_job(client, jid)
    return job.failure is not None


async def test_a_timeout_failure_names_the_public_error(client: aqless.Client) -> None:
    with anyio.fail_after(3):
        job = await process(client, one(sleeps, timeout=0.2), "app.job")
    assert job.failure is not None
    assert job.failure.group == "q-JobTimeoutError"  # what other qless clients read
    assert "aqless.JobTimeoutError: job" in job.failure.message
    assert "_worker" not in job.failure.message.splitlines()[-1]
    assert aqless.JobTimeoutError.__module__ == "aqless"
