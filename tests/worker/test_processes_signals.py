"""aqless-run's signals, its supervisor (--processes, restarts, --max-jobs), --resume and
--workdir, with real processes."""

from __future__ import annotations

import signal
import time
from collections import Counter
from pathlib import Path

import anyio
import pytest

import aqless
from tests.worker.process_helpers import (
    WORKER,
    Spawner,
    alive,
    aq_fixture,  # noqa: F401
    count_reaches,
    eventually,
    listed,
    pids_and_names,
    put,
    running_sleepers,
    spawn_fixture,  # noqa: F401
)

pytestmark = pytest.mark.timeout(60)


async def states(aq: aqless.Client, jids: list[str]) -> Counter[str]:
    return Counter(str(job.state) for job in await aq.jobs.get_many(jids))


async def test_sigquit_finishes_the_running_jobs_then_exits_0(
    aq: aqless.Client, spawn: Spawner
) -> None:
    worker, jids = await running_sleepers(aq, spawn, 3, sleep=1.0)
    worker.send(signal.SIGQUIT)
    await worker.logged("SIGQUIT")
    await worker.logged("stopping: 3 jobs running")  # logged once it listens no more
    later = await put(aq, "aqjobs.noop", 1)  # not taken: the worker stopped popping
    assert await worker.exited(timeout=5) == 0
    assert sorted(await listed(aq, "done")) == sorted(jids)
    assert await states(aq, jids) == {"complete": 3}
    assert await states(aq, later) == {"waiting": 1}


async def test_sigusr1_hands_the_running_jobs_back_and_goes_on(
    aq: aqless.Client, spawn: Spawner
) -> None:
    worker, jids = await running_sleepers(aq, spawn, 2, sleep=30)
    await aq.redis.set("sleep", 0)  # their second run is quick
    worker.send(signal.SIGUSR1)
    await count_reaches(aq, "done", 2, timeout=5)
    assert Counter(await listed(aq, "started")) == dict.fromkeys(jids, 2)
    await both_complete(aq, jids)
    for job in await aq.jobs.get_many(jids):
        assert [entry.what for entry in job.history].count("popped") == 2
    assert worker.running()
    assert "SIGUSR1" in worker.log()


async def test_sigusr2_logs_the_stacks_and_pauses_until_sigcont(
    aq: aqless.Client, spawn: Spawner
) -> None:
    worker = spawn(*WORKER, "q")
    await worker.logged("serving q")
    worker.send(signal.SIGUSR2)
    await worker.logged("task ")
    assert 'File "' in worker.log()  # where each task waits
    jids = await put(aq, "aqjobs.noop", 2)
    await anyio.sleep(1.5)  # a put event and a poll would have woken it
    assert await states(aq, jids) == {"waiting": 2}
    worker.send(signal.SIGCONT)
    await count_reaches(aq, "done", 2, timeout=3)


async def test_two_processes_have_distinct_names_and_a_killed_one_is_replaced(
    aq: aqless.Client, spawn: Spawner
) -> None:
    await aq.redis.set("sleep", 0.3)
    supervisor = spawn(*WORKER, "-p", "2", "-c", "1", "q")
    await eventually(lambda: len(supervisor.children()) == 2, 10, "two workers")
    first = supervisor.children()
    await put(aq, "aqjobs.sleeper", 6)
    await count_reaches(aq, "done", 6)
    runs = await pids_and_names(aq)
    assert {pid for pid, _ in runs} == set(first)
    assert len({name for _, name in runs}) == 2
    killed = first[0]
    supervisor.send_to(killed, signal.SIGKILL)
    await eventually(
        lambda: len(supervisor.children()) == 2 and killed not in supervisor.children(),
        10,
        "the killed worker replaced",
    )
    assert supervisor.running()
    workers = supervisor.children()
    supervisor.send(signal.SIGTERM)
    assert await supervisor.exited(timeout=10) == 0
    assert not any(alive(pid) for pid in workers)


async def test_max_jobs_recycles_the_worker_process(aq: aqless.Client, spawn: Spawner) -> None:
    await put(aq, "aqjobs.sleeper", 9)
    supervisor = spawn(*WORKER, "--max-jobs", "3", "-c", "1", "q")
    await count_reaches(aq, "done", 9)
    runs = await pids_and_names(aq)
    assert sorted(Counter(pid for pid, _ in runs).values()) == [3, 3, 3]
    assert len({name for _, name in runs}) == 3
    assert supervisor.running()
    supervisor.send(signal.SIGTERM)
    assert await supervisor.exited(timeout=10) == 0


async def test_resume_takes_back_its_jobs_before_their_locks_expire(
    aq: aqless.Client, spawn: Spawner
) -> None:
    await aq.config.set("heartbeat", 30)
    killed, jids = await running_sleepers(aq, spawn, 2, "--name", "fixed", sleep=30)
    killed.send(signal.SIGKILL)
    await killed.exited()
    await aq.redis.set("sleep", 0)
    started = time.monotonic()
    spawn(*WORKER, "--name", "fixed", "--resume", "q")
    await count_reaches(aq, "done", 2, timeout=10)
    await both_complete(aq, jids)
    assert time.monotonic() - started < 10  # long before the 30 s locks expire
    for job in await aq.jobs.get_many(jids):
        assert [entry.what for entry in job.history] == ["put", "popped", "done"]


async def test_workdir_gives_each_job_a_clean_sandbox(
    aq: aqless.Client, spawn: Spawner, tmp_path: Path
) -> None:
    await put(aq, "aqjobs.sandboxed", 3)
    spawn(*WORKER, "--workdir", "boxes", "-c", "1", "q")
    await count_reaches(aq, "sandboxes", 3)
    seen = [entry.split(" ") for entry in await listed(aq, "sandboxes")]
    assert {path for path, _ in seen} == {str(tmp_path / "boxes" / "slot-0")}
    assert [listing for _, listing in seen] == ["", "", ""]  # no left-over from the last job
    await eventually(lambda: not (tmp_path / "boxes" / "slot-0").exists(), 5, "removed")


async def both_complete(aq: aqless.Client, jids: list[str]) -> None:
    """Wait for the completes, which the worker sends after the code's side effects."""

    async def complete() -> bool:
        return await states(aq, jids) == {"complete": len(jids)}

    await eventually(complete, 5, "both complete")
