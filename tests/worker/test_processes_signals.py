"""Every signal aqless-run obeys, sent to one worker process and to the supervisor of two
(which passes it on), each ending where docs/production.md's signal table says the jobs go."""

from __future__ import annotations

import signal
import socket
from collections import Counter

import anyio
import pytest

import aqless
from tests.support.worker_processes import (
    WORKER,
    Spawner,
    WorkerProcess,
    alive,
    aq_fixture,  # noqa: F401
    count_reaches,
    listed,
    put,
    reach_states,
    running_sleepers,
    spawn_fixture,  # noqa: F401
    states,
)

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.deployments(
        "valkey9",
        reason="worker processes: their signals, supervisor and children are the same whatever "
        "the server; the server paths they call run on both in the in-process worker tests",
    ),
]

#: one worker process, or a supervisor of two with one slot each: two jobs run either way
LAYOUTS = {1: ("-c", "2"), 2: ("-p", "2", "-c", "1")}
processes = pytest.mark.parametrize("processes", list(LAYOUTS), ids=["1-process", "2-processes"])


async def two_running(
    aq: aqless.Client, spawn: Spawner, processes: int, *arguments: str, sleep: float
) -> tuple[WorkerProcess, list[str], list[int]]:
    """A worker (or supervisor) running two sleepers; the pids of the worker processes."""
    worker, jids = await running_sleepers(
        aq, spawn, 2, *LAYOUTS[processes], *arguments, sleep=sleep
    )
    await worker.logged("serving q", times=processes)
    return worker, jids, worker.children() if processes > 1 else [worker.pid]


@processes
@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT], ids=["TERM", "INT"])
async def test_term_and_int_hand_the_running_jobs_back_after_the_grace_and_exit_0(
    aq: aqless.Client, spawn: Spawner, processes: int, number: signal.Signals
) -> None:
    worker, jids, pids = await two_running(aq, spawn, processes, "--grace", "0.2", sleep=30)
    worker.send(number)
    assert await worker.exited(timeout=5) == 0
    assert not any(alive(pid) for pid in pids)
    assert await aq.redis.llen("cancelled") == 2  # their code was cancelled
    for job in await aq.jobs.get_many(jids):  # handed back, not left to their locks
        assert str(job.state) == "waiting"
        assert job.retries_left == job.original_retries  # a stop spends no retry
        last = job.history[-1]
        assert (last.what, last.details["reason"]) == ("handed-back", "grace expired")
    for pid in pids:
        assert (await aq.workers.jobs(f"{socket.gethostname()}-{pid}")).jobs == ()


async def test_two_graceful_stops_spend_no_retry_and_the_job_completes_with_all_left(
    aq: aqless.Client, spawn: Spawner
) -> None:
    """A job put with 5 retries, held by a worker stopped (SIGTERM, past its grace) twice:
    it is handed back each time, and completes later with its 5 retries left."""
    await aq.redis.set("sleep", 30)
    jid = await aq.queues["q"].put("aqjobs.sleeper", retries=5)
    for stop in (1, 2):
        worker = spawn(*WORKER, "--grace", "0.2", "q")
        await count_reaches(aq, "started", stop)
        worker.send(signal.SIGTERM)
        assert await worker.exited(timeout=5) == 0
        job = await aq.jobs.get(jid)
        assert isinstance(job, aqless.Job)
        assert (str(job.state), job.retries_left) == ("waiting", 5)
    await aq.redis.set("sleep", 0)
    worker = spawn(*WORKER, "q")
    await count_reaches(aq, "done", 1)
    await reach_states(aq, [jid], {"complete": 1})
    job = await aq.jobs.get(jid)
    assert isinstance(job, aqless.Job)
    assert job.retries_left == 5
    reasons = [entry.details["reason"] for entry in job.history if entry.what == "handed-back"]
    assert reasons == ["grace expired", "grace expired"]
    worker.send(signal.SIGTERM)
    assert await worker.exited(timeout=5) == 0


@processes
async def test_quit_finishes_the_running_jobs_then_exits_0(
    aq: aqless.Client, spawn: Spawner, processes: int
) -> None:
    worker, jids, _ = await two_running(aq, spawn, processes, sleep=1.0)
    worker.send(signal.SIGQUIT)
    await worker.logged("SIGQUIT", times=processes)
    await worker.logged("stopping: ", times=processes)  # logged once it listens no more
    later = await put(aq, "aqjobs.noop", 1)  # not taken: the workers stopped popping
    assert await worker.exited(timeout=15) == 0  # a bound: a loaded machine is slow to exit
    assert sorted(await listed(aq, "done")) == sorted(jids)
    assert await states(aq, jids) == {"complete": 2}
    assert await states(aq, later) == {"waiting": 1}


@processes
async def test_usr1_hands_the_running_jobs_back_and_goes_on(
    aq: aqless.Client, spawn: Spawner, processes: int
) -> None:
    worker, jids, pids = await two_running(aq, spawn, processes, sleep=30)
    await aq.redis.set("sleep", 0)  # their second run is quick
    worker.send(signal.SIGUSR1)
    await count_reaches(aq, "done", 2, timeout=5)
    assert Counter(await listed(aq, "started")) == dict.fromkeys(jids, 2)
    await reach_states(aq, jids, {"complete": 2})
    for job in await aq.jobs.get_many(jids):
        assert [entry.what for entry in job.history].count("popped") == 2
        assert job.retries_left == job.original_retries
        handed = [entry for entry in job.history if entry.what == "handed-back"]
        assert [entry.details["reason"] for entry in handed] == ["operator"]
    assert worker.running()
    assert all(alive(pid) for pid in pids)
    await worker.logged("SIGUSR1", times=processes)


@processes
async def test_usr2_logs_the_stacks_and_pauses_until_cont(
    aq: aqless.Client, spawn: Spawner, processes: int
) -> None:
    worker = spawn(*WORKER, *LAYOUTS[processes], "q")
    await worker.logged("serving q", times=processes)
    worker.send(signal.SIGUSR2)
    # each worker's line, and the supervisor's ("supervisor: SIGUSR2, passed to 2 workers"):
    # counted without it, one worker could still be popping when the jobs are put
    await worker.logged("SIGUSR2", times=processes + (processes > 1))
    await worker.logged("task ")
    assert 'File "' in worker.log()  # where each task waits
    jids = await put(aq, "aqjobs.noop", 2)
    await anyio.sleep(1.5)  # a put event and a poll would have woken it
    assert await states(aq, jids) == {"waiting": 2}
    worker.send(signal.SIGCONT)
    await reach_states(aq, jids, {"complete": 2})


@processes
async def test_hup_leaves_the_running_jobs_and_the_workers_alone(
    aq: aqless.Client, spawn: Spawner, processes: int
) -> None:
    worker, jids, pids = await two_running(aq, spawn, processes, sleep=1.5)
    worker.send(signal.SIGHUP)
    await worker.logged("SIGHUP: nothing to do", times=processes)
    await reach_states(aq, jids, {"complete": 2})
    for job in await aq.jobs.get_many(jids):
        assert [entry.what for entry in job.history] == ["put", "popped", "done"]
    assert worker.running()
    assert (worker.children() if processes > 1 else [worker.pid]) == pids
    later = await put(aq, "aqjobs.noop", 1)  # still serving
    await reach_states(aq, later, {"complete": 1})
