"""Isolated job code: plain functions run in child processes, which lock loss, cancel,
timeout and the worker's stop terminate; returns, exceptions and retries as usual."""

from __future__ import annotations

import json
import logging
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import aqless
from aqless import Job, JobState
from tests.support.worker import get_job, make_worker, running, until, until_state
from tests.support.worker_processes import (
    Spawner,
    aq_fixture,  # noqa: F401
    count_reaches,
    spawn_fixture,  # noqa: F401
)
from tests.worker import isolated_jobs

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.deployments(
        "valkey9",
        reason="worker processes: their signals, supervisor and children are the same whatever "
        "the server; the server paths they call run on both in the in-process worker tests",
    ),
]


def isolated(function: Callable[[Job], Any], *, klass: str = "app.job", **options: Any) -> Any:
    handlers = aqless.Handlers()
    handlers.register(klass, isolate=True, **options)(function)
    return handlers


def gone(pid: int) -> bool:
    """Whether no process has this id (a zombie still has one)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


async def pid_of(folder: Path, jid: str) -> int:
    """The process the job's code runs in, once it has noted it."""
    path = folder / f"{jid}.pid"
    await until(path.exists, timeout=20, what=f"job {jid} started")
    return int(path.read_text())


async def put(client: aqless.Client, folder: Path, klass: str = "app.job", **data: Any) -> str:
    return await client.queues["q"].put(klass, {"dir": str(folder), **data})


async def test_an_isolated_job_completes_in_a_child_process(
    client: aqless.Client, tmp_path: Path
) -> None:
    jid = await put(client, tmp_path, n=1)
    worker = make_worker(client, ["q"], isolated(isolated_jobs.records))
    async with running(worker):
        await until_state(client, jid, JobState.COMPLETE, timeout=20)
        pid = await pid_of(tmp_path, jid)
        assert pid != os.getpid()
        assert worker._performer.children.pids == [pid]  # kept for the next job
    assert gone(pid), "the worker's stop left its idle child behind"
    seen = json.loads((tmp_path / f"{jid}.json").read_text())
    assert seen["data"] == {"dir": str(tmp_path), "n": 1}
    assert (seen["queue"], seen["state"]) == ("q", "running")
    assert "without a client" in seen["client"]
    assert worker.counters.completed == 1


async def test_an_isolated_job_fails_with_the_childs_traceback(
    client: aqless.Client, tmp_path: Path
) -> None:
    jid = await put(client, tmp_path, n=7)
    worker = make_worker(client, ["q"], isolated(isolated_jobs.raises))
    async with running(worker):
        job = await until_state(client, jid, JobState.FAILED, timeout=20)
    assert job.failure is not None
    assert job.failure.group == "q-ValueError"
    assert "ValueError: bad input 7" in job.failure.message
    assert 'isolated_jobs.py", line' in job.failure.message  # where the child raised it
    assert "in raises" in job.failure.message


async def test_an_isolated_job_retries(client: aqless.Client, tmp_path: Path) -> None:
    jid = await put(client, tmp_path)
    worker = make_worker(client, ["q"], isolated(isolated_jobs.retries))
    async with running(worker):
        job = await until_state(client, jid, JobState.SCHEDULED, timeout=20)
    assert job.retries_left == job.original_retries - 1
    assert job.failure is not None
    assert (job.failure.group, job.failure.message) == ("try-later", "not yet")
    assert worker.counters.retried == 1


async def test_an_exception_of_its_own_class_comes_back_with_its_name(
    client: aqless.Client, tmp_path: Path
) -> None:
    jid = await put(client, tmp_path)
    worker = make_worker(client, ["q"], isolated(isolated_jobs.raises_what_does_not_unpickle))
    async with running(worker):
        job = await until_state(client, jid, JobState.FAILED, timeout=20)
    assert job.failure is not None
    assert job.failure.group == "q-NeedsTwoArguments"
    assert "this and that" in job.failure.message
    assert "aqless.ChildTraceback: " in job.failure.message  # the child's traceback first
    last = job.failure.message.splitlines()[-1]  # the job's own class, not aqless's stand-in
    assert last == "tests.worker.isolated_jobs.NeedsTwoArguments: this and that", last


async def test_a_child_that_dies_fails_its_job_and_is_replaced(
    client: aqless.Client, tmp_path: Path
) -> None:
    handlers = isolated(isolated_jobs.dies, klass="app.dies")
    handlers.register("app.records", isolate=True)(isolated_jobs.records)
    died = await put(client, tmp_path, "app.dies")
    worker = make_worker(client, ["q"], handlers, concurrency=1)
    async with running(worker):
        job = await until_state(client, died, JobState.FAILED, timeout=20)
        after = await put(client, tmp_path, "app.records")
        await until_state(client, after, JobState.COMPLETE, timeout=20)
    assert job.failure is not None
    assert job.failure.group == "q-ChildProcessDied"
    assert "exited with status 3" in job.failure.message
    assert job.failure.message.splitlines()[-1].startswith("aqless.ChildProcessDied: ")
    assert await pid_of(tmp_path, after) != await pid_of(tmp_path, died)


async def test_a_cancelled_isolated_job_loses_its_process(
    client: aqless.Client, tmp_path: Path
) -> None:
    jid = await put(client, tmp_path)
    worker = make_worker(client, ["q"], isolated(isolated_jobs.blocks))
    async with running(worker):
        pid = await pid_of(tmp_path, jid)
        await (await get_job(client, jid)).cancel()
        await until(lambda: gone(pid), timeout=1, what=f"process {pid} gone")
        await until(lambda: not worker.running, timeout=1)
        assert worker.counters.lost == 1
    assert await client.jobs.get(jid) is None
    assert worker.counters.failed == 0


async def test_a_timed_out_isolated_job_loses_its_process_and_fails(
    client: aqless.Client, tmp_path: Path
) -> None:
    jid = await put(client, tmp_path)
    # the timeout counts from the job's start, which here includes starting its process: 3 s
    # ended jobs whose child had not yet noted its pid on a loaded machine
    worker = make_worker(client, ["q"], isolated(isolated_jobs.blocks, timeout=8))
    async with running(worker):
        pid = await pid_of(tmp_path, jid)
        job = await until_state(client, jid, JobState.FAILED, timeout=20)
        assert gone(pid), "the job failed before its process was gone"
    assert job.failure is not None
    assert job.failure.group == "q-JobTimeoutError"


async def test_an_isolated_job_whose_lock_is_lost_loses_its_process(
    client: aqless.Client, tmp_path: Path
) -> None:
    jid = await put(client, tmp_path)
    worker = make_worker(client, ["q"], isolated(isolated_jobs.blocks))
    async with running(worker):
        pid = await pid_of(tmp_path, jid)
        worker.pause()  # so that it does not take the stalled job again
        await (await get_job(client, jid)).timeout()  # from outside: the lock is gone
        await until(lambda: gone(pid), timeout=1, what=f"process {pid} gone")
        await until(lambda: worker.counters.lost == 1, timeout=1)
    assert (await get_job(client, jid)).state == JobState.STALLED


async def test_a_child_that_ignores_sigterm_is_killed(
    client: aqless.Client, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="aqless._worker")
    jid = await put(client, tmp_path)
    worker = make_worker(client, ["q"], isolated(isolated_jobs.ignores_sigterm))
    async with running(worker):
        pid = await pid_of(tmp_path, jid)
        await (await get_job(client, jid)).cancel()
        await until(lambda: gone(pid), timeout=1, what=f"process {pid} gone")
    assert f"process {pid} ignored SIGTERM: SIGKILL" in caplog.messages


async def test_stopping_the_worker_kills_its_children(
    client: aqless.Client, tmp_path: Path
) -> None:
    handlers = isolated(isolated_jobs.blocks, klass="app.blocks")
    handlers.register("app.records", isolate=True)(isolated_jobs.records)
    done = await put(client, tmp_path, "app.records")
    stuck = await put(client, tmp_path, "app.blocks")
    worker = make_worker(client, ["q"], handlers, concurrency=2, grace=0.3)
    async with running(worker) as run:
        await until_state(client, done, JobState.COMPLETE, timeout=20)
        pids = [await pid_of(tmp_path, done), await pid_of(tmp_path, stuck)]
        stopped_at = time.monotonic()
        worker.stop()  # once: the running job gets its grace, then is handed back
        counters = await run.stopped()
    assert time.monotonic() - stopped_at < 3
    assert [gone(pid) for pid in pids] == [True, True]
    assert counters.handed_back == 1
    job = await get_job(client, stuck)
    assert job.state == JobState.WAITING
    assert (job.history[-1].what, job.history[-1].details["reason"]) == (
        "handed-back",
        "grace expired",
    )


async def test_the_worker_isolates_every_handler_but_those_that_say_not(
    client: aqless.Client, tmp_path: Path
) -> None:
    handlers = aqless.Handlers()
    handlers.register("app.default")(isolated_jobs.records)
    handlers.register("app.in-thread", isolate=False)(isolated_jobs.records)
    default = await put(client, tmp_path, "app.default")
    in_thread = await put(client, tmp_path, "app.in-thread")
    worker = make_worker(client, ["q"], handlers, isolate=True)
    async with running(worker):
        for jid in (default, in_thread):
            job = await until_state(client, jid, JobState.COMPLETE, JobState.FAILED, timeout=20)
            assert job.state == JobState.COMPLETE, job.failure
    assert await pid_of(tmp_path, default) != os.getpid()
    assert await pid_of(tmp_path, in_thread) == os.getpid()


@pytest.mark.parametrize(("max_jobs", "processes"), [(None, 1), (1, 3)])
async def test_children_are_reused_or_replaced_after_max_jobs(
    client: aqless.Client, tmp_path: Path, max_jobs: int | None, processes: int
) -> None:
    jids = [await put(client, tmp_path) for _ in range(3)]
    handlers = isolated(isolated_jobs.records)
    worker = make_worker(client, ["q"], handlers, concurrency=1, isolate_max_jobs=max_jobs)
    async with running(worker):
        for jid in jids:
            await until_state(client, jid, JobState.COMPLETE, timeout=20)
    assert len({await pid_of(tmp_path, jid) for jid in jids}) == processes


def test_isolating_a_coroutine_function_is_a_configuration_error() -> None:
    async def welcome(job: Job) -> None:
        pass

    with pytest.raises(aqless.ConfigurationError, match="isolate"):
        aqless.Handlers().register("app.job", isolate=True)(welcome)


async def test_aqless_run_isolate_kills_the_child_of_a_job_cut_off_by_a_stop(
    aq: aqless.Client, spawn: Spawner
) -> None:
    jid = await aq.queues["q"].put("aqjobs.sync_pid_sleeper", {"sleep": 30})
    worker = spawn("--grace", "0.3", "-i", "aqjobs", "q", env={"AQLESS_ISOLATE": "1"})
    await count_reaches(aq, "sync-pids", 1)
    noted = await aq.redis.lindex("sync-pids", 0)
    assert noted is not None
    pid = int(noted)
    assert pid in worker.children()  # not a thread of the worker: a process of its own
    stopped_at = time.monotonic()
    worker.send(signal.SIGTERM)
    assert await worker.exited() == 0
    assert time.monotonic() - stopped_at < 10, "the worker waited for the job's code"
    assert gone(pid)
    assert f"job {jid}: stopping its process {pid}" in worker.log()
    assert await aq.redis.llen("sync-done") == 0
    assert (await get_job(aq, jid)).state == JobState.WAITING  # handed back


def running_process(pid: int) -> bool:
    """Whether the process runs (not gone, not a zombie that its new parent leaves unreaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


async def test_a_child_exits_when_its_worker_is_killed(aq: aqless.Client, spawn: Spawner) -> None:
    await aq.queues["q"].put("aqjobs.sync_pid_sleeper", {"sleep": 30})
    worker = spawn("--isolate", "-i", "aqjobs", "q")
    await count_reaches(aq, "sync-pids", 1)
    noted = await aq.redis.lindex("sync-pids", 0)
    assert noted is not None
    pid = int(noted)
    assert running_process(pid)
    worker.send(signal.SIGKILL)
    await until(lambda: not running_process(pid), timeout=2, what=f"process {pid} gone")
    assert await aq.redis.llen("sync-done") == 0
