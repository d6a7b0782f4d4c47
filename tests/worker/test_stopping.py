"""Stopping and steering a worker: stop with a grace period, a second stop, finish, pause
and resume, handing running jobs back, max_jobs, resume and the sandbox."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

import aqless
from aqless import Job, JobState
from tests.support.worker import (
    Recorder,
    Sleeper,
    all_complete,
    get_job,
    make_worker,
    one,
    running,
    sleeping,
    until,
    until_state,
)

# Stopping, pausing and handing jobs back are the worker's steps and the script's calls, the
# same on every kind: the two unix kinds only. A stopped worker's withdrawn offer (pushes) is
# tested on every kind in test_pushes; lock renewal and loss in test_running.


async def assert_handed_back(
    client: aqless.Client, other: aqless.Client, jid: str, reason: str
) -> None:
    """The job is waiting again with all its retries, why in its history (no failure), and
    another worker takes it now."""
    job = await get_job(client, jid)
    assert job.state == JobState.WAITING
    assert job.failure is None
    assert job.retries_left == job.original_retries
    last = job.history[-1]
    assert (last.what, dict(last.details)) == (
        "handed-back",
        {"reason": reason, "worker": client.worker_name},
    )
    taken = await other.queues["q"].pop_many(10)
    assert jid in [job.jid for job in taken]


async def test_stop_gives_grace_then_hands_back(
    client: aqless.Client, other: aqless.Client
) -> None:
    finishing = anyio.Event()
    handlers = aqless.Handlers()

    @handlers.register("app.finishes")
    async def finishes(job: Job) -> None:
        await finishing.wait()

    @handlers.register("app.never")
    async def never(job: Job) -> None:
        await anyio.sleep(60)

    finished = await client.queues["q"].put("app.finishes")
    stuck = await client.queues["q"].put("app.never")
    worker = make_worker(client, ["q"], handlers, grace=0.5)
    async with running(worker) as run:
        await until(lambda: len(worker.running) == 2)
        stopped_at = time.monotonic()
        worker.stop()
        await until(lambda: not worker.listening)  # the server knows: it pushes no more
        later = await client.queues["q"].put("app.finishes")
        finishing.set()
        counters = await run.stopped()
    assert time.monotonic() - stopped_at < 3
    assert (counters.completed, counters.handed_back, counters.started) == (1, 1, 2)
    assert (await get_job(client, finished)).state == JobState.COMPLETE
    assert (await get_job(client, later)).state == JobState.WAITING  # not popped after stop
    await assert_handed_back(client, other, stuck, "grace expired")


async def test_a_second_stop_hands_back_at_once(
    client: aqless.Client, other: aqless.Client
) -> None:
    async with sleeping(client, grace=30) as (worker, sleeper, jid):
        worker.stop()
        await anyio.sleep(0.1)
        assert worker.running  # still within its grace
        stopped_at = time.monotonic()
        worker.stop()
        await until(lambda: worker.state == "stopped", timeout=2)
    assert sleeper.cancelled_at is not None
    assert sleeper.cancelled_at - stopped_at < 1
    assert worker.counters.handed_back == 1
    await assert_handed_back(client, other, jid, "worker stopping")


async def test_finish_waits_for_every_job(client: aqless.Client) -> None:
    gate = anyio.Event()

    async def gated(job: Job) -> None:
        await gate.wait()

    jids = [await client.queues["q"].put("app.job") for _ in range(2)]
    worker = make_worker(client, ["q"], one(gated), grace=0)
    async with running(worker) as run:
        await until(lambda: len(worker.running) == 2)
        worker.finish()
        await until(lambda: not worker.listening)
        later = await client.queues["q"].put("app.job")
        await anyio.sleep(0.3)
        assert len(worker.running) == 2
        assert worker.state == "stopping"
        gate.set()
        counters = await run.stopped()
    assert counters.completed == 2
    assert counters.handed_back == 0
    await all_complete(client, jids)
    assert (await get_job(client, later)).state == JobState.WAITING


async def test_pause_and_resume_popping(client: aqless.Client) -> None:
    async def fine(job: Job) -> None:
        pass

    worker = make_worker(client, ["q"], one(fine))
    async with running(worker):
        worker.pause()
        await anyio.sleep(0.1)
        jid = await client.queues["q"].put("app.job")
        await anyio.sleep(0.4)  # two polls and a put event
        assert worker.counters.started == 0
        worker.resume_popping()
        await until_state(client, jid, JobState.COMPLETE, timeout=1)


async def test_hand_back_running_jobs_and_go_on(
    client: aqless.Client, other: aqless.Client
) -> None:
    async with sleeping(client) as (worker, sleeper, jid):
        worker.pause()
        worker.hand_back_running("asked to")
        await until(lambda: not worker.running, timeout=1)
        assert worker.state == "running"
        assert sleeper.cancelled_at is not None
        assert worker.counters.handed_back == 1
        await assert_handed_back(client, other, jid, "asked to")


async def test_an_empty_hand_back_reason_is_refused_with_the_jobs_left_running(
    client: aqless.Client,
) -> None:
    async with sleeping(client) as (worker, sleeper, jid):
        with pytest.raises(aqless.InvalidValueError) as refused:
            worker.hand_back_running("")
        assert refused.value.option == "reason"
        assert sleeper.cancelled_at is None
        assert (await client.jobs.get(jid)).state == JobState.RUNNING  # type: ignore[union-attr]


async def test_max_jobs(client: aqless.Client) -> None:
    async def fine(job: Job) -> None:
        pass

    for _ in range(5):
        await client.queues["q"].put("app.job")
    worker = make_worker(client, ["q"], one(fine), max_jobs=3, concurrency=2)
    async with running(worker) as run:
        counters = await run.stopped()
    assert (counters.started, counters.completed) == (3, 3)
    assert worker.limit_reached == "max_jobs"
    counts = await client.queues["q"].counts()
    assert (counts.waiting, counts.running) == (2, 0)
    burst = make_worker(client, ["q"], one(fine), max_jobs=3, burst=True)
    async with running(burst) as run:
        await run.stopped()
    assert burst.limit_reached is None  # the queue ran dry first


async def test_resume_takes_back_the_jobs_held_under_its_name(
    client: aqless.Client, other: aqless.Client
) -> None:
    recorder = Recorder()
    queue = client.queues["q"]
    ours = await queue.put("app.job")
    theirs = await queue.put("app.job")
    assert (await queue.pop()) is not None  # popped by this name, never finished
    assert (await other.queues["q"].pop()) is not None
    worker = make_worker(client, ["q"], one(recorder), resume=True)
    async with running(worker):
        await until_state(client, ours, JobState.COMPLETE)
        await anyio.sleep(0.2)
    assert recorder.jids == [ours]
    job = await get_job(client, theirs)
    assert (job.state, job.worker_name) == (JobState.RUNNING, "other-worker")


async def test_without_resume_held_jobs_are_left_alone(client: aqless.Client) -> None:
    queue = client.queues["q"]
    jid = await queue.put("app.job")
    assert (await queue.pop()) is not None
    worker = make_worker(client, ["q"], one(lambda job: None))
    async with running(worker):
        await anyio.sleep(0.3)
    assert worker.counters.started == 0
    assert (await get_job(client, jid)).state == JobState.RUNNING


async def test_workdir_gives_each_job_a_clean_sandbox(
    client: aqless.Client, tmp_path: Path
) -> None:
    seen: list[tuple[Path, list[str]]] = []

    def uses_sandbox(job: Job) -> None:
        assert job.sandbox is not None
        seen.append((job.sandbox, sorted(p.name for p in job.sandbox.iterdir())))
        (job.sandbox / "left-over").write_text(job.jid)

    workdir = tmp_path / "work"
    jids = [await client.queues["q"].put("app.job") for _ in range(3)]
    worker = make_worker(client, ["q"], one(uses_sandbox), concurrency=1, workdir=workdir)
    async with running(worker):
        await all_complete(client, jids)
    assert [files for _, files in seen] == [[], [], []]
    assert all(sandbox.parent == workdir for sandbox, _ in seen)
    assert not any(sandbox.exists() for sandbox, _ in seen)


async def test_a_job_with_no_retries_left_is_put_back_not_failed(client: aqless.Client) -> None:
    sleeper = Sleeper()
    jid = await client.queues["q"].put("app.job", {"n": 1}, retries=0)
    worker = make_worker(client, handlers=one(sleeper), grace=0)
    async with running(worker) as run:
        with anyio.fail_after(5):
            await sleeper.started.wait()
        worker.stop()
        counters = await run.stopped()
    assert counters.handed_back == 1
    job = await get_job(client, jid)
    assert job.state == JobState.WAITING
    assert job.queue_name == "q"
    assert job.data == {"n": 1}
