"""aqless-run's supervisor (--processes, restarts, --max-jobs, --burst), --resume and
--workdir, with real processes."""

from __future__ import annotations

import signal
import time
from collections import Counter
from pathlib import Path

import anyio
import pytest
import redis

import aqless
from aqless._worker.supervisor import Supervisor
from tests.support.worker_processes import (
    WORKER,
    Spawner,
    alive,
    aq_fixture,  # noqa: F401
    count_reaches,
    eventually,
    listed,
    pids_and_names,
    put,
    reach_states,
    running_sleepers,
    spawn_fixture,  # noqa: F401
)

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.deployments(
        "valkey9",
        reason="worker processes: their signals, supervisor and children are the same whatever "
        "the server; the server paths they call run on both in the in-process worker tests",
    ),
]


async def test_two_processes_have_distinct_names_and_a_killed_or_stopped_one_is_replaced(
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
    stopped = supervisor.children()[0]
    supervisor.send_to(stopped, signal.SIGTERM)  # a worker stopped alone: replaced too
    await eventually(
        lambda: len(supervisor.children()) == 2 and stopped not in supervisor.children(),
        10,
        "the stopped worker replaced",
    )
    assert "stopped; replacing it" in supervisor.log()
    workers = supervisor.children()
    supervisor.send(signal.SIGTERM)
    assert await supervisor.exited(timeout=10) == 0
    assert not any(alive(pid) for pid in workers)


async def test_a_signal_reaching_a_starting_worker_waits_until_it_obeys(
    aq: aqless.Client, spawn: Spawner
) -> None:
    supervisor = spawn(*WORKER, "-p", "2", "q")
    await eventually(lambda: len(supervisor.children()) == 2, 10, "two workers")
    workers = supervisor.children()
    supervisor.send(signal.SIGUSR1)  # passed on while they still import (by default: death)
    await supervisor.logged("SIGUSR1", times=3)  # the supervisor's line and each worker's
    await supervisor.logged("serving q", times=2)
    assert supervisor.children() == workers
    assert "exited with" not in supervisor.log()
    jids = await put(aq, "aqjobs.noop", 2)
    await reach_states(aq, jids, {"complete": 2})


async def test_max_jobs_recycles_the_worker_process(aq: aqless.Client, spawn: Spawner) -> None:
    await put(aq, "aqjobs.sleeper", 9)
    supervisor = spawn(*WORKER, "--max-jobs", "3", "-c", "1", "q")
    await count_reaches(aq, "done", 9)
    runs = await pids_and_names(aq)
    assert sorted(Counter(pid for pid, _ in runs).values()) == [3, 3, 3]
    assert len({name for _, name in runs}) == 3
    assert supervisor.running()
    assert "worker 1 recycled" in supervisor.log()
    supervisor.send(signal.SIGTERM)
    assert await supervisor.exited(timeout=10) == 0


async def test_a_worker_starting_when_the_stop_arrives_is_stopped_too(
    server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stop passes to the workers the supervisor has. One it is starting meanwhile (a
    recycled worker's replacement) is not among them yet: it gets the stop once started, or
    the supervisor would wait for it forever."""
    with redis.Redis.from_url(server_url) as connection:
        connection.flushall()  # what other tests left in "q" is not this worker's to run
    monkeypatch.setenv("AQLESS_URL", server_url)
    supervisor = Supervisor(["q"], processes=1, name=None)
    supervisor.pass_on(signal.SIGINT)  # no worker yet: the one below was being started
    process = await supervisor._start(0)
    try:
        with anyio.fail_after(20):
            assert await process.wait() == 0
    finally:
        if process.returncode is None:
            process.kill()


async def test_burst_with_two_processes_exits_once_both_found_no_more_work(
    aq: aqless.Client, spawn: Spawner
) -> None:
    jids = await put(aq, "aqjobs.noop", 4)
    supervisor = spawn(*WORKER, "--burst", "-p", "2", "-c", "1", "q")
    assert await supervisor.exited(timeout=10) == 0
    await reach_states(aq, jids, {"complete": 4})
    assert supervisor.log().count("found no more work; finishing") == 2
    assert "replacing it" not in supervisor.log()
    assert "every worker has exited" in supervisor.log()


async def test_burst_with_max_jobs_exits_at_once_on_empty_queues(
    aq: aqless.Client, spawn: Spawner
) -> None:
    supervisor = spawn(*WORKER, "--burst", "--max-jobs", "5", "q")
    assert await supervisor.exited(timeout=10) == 0
    assert "replacing it" not in supervisor.log()


async def test_burst_replaces_a_worker_that_reached_max_jobs_until_the_queues_are_empty(
    aq: aqless.Client, spawn: Spawner
) -> None:
    await aq.redis.set("sleep", 0)
    jids = await put(aq, "aqjobs.sleeper", 5)
    supervisor = spawn(*WORKER, "--burst", "--max-jobs", "2", "-c", "1", "q")
    assert await supervisor.exited(timeout=15) == 0
    await reach_states(aq, jids, {"complete": 5})
    runs = Counter(pid for pid, _ in await pids_and_names(aq))
    assert sorted(runs.values()) == [1, 2, 2]  # two recycled, the third found the queue empty
    assert supervisor.log().count("recycled; replacing it") == 2


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
    await reach_states(aq, jids, {"complete": 2})
    assert time.monotonic() - started < 10  # long before the 30 s locks expire
    for job in await aq.jobs.get_many(jids):  # each taken back: a second hand-out, a new attempt
        assert [entry.what for entry in job.history] == ["put", "popped", "taken-back", "done"]


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
