"""Issue 4's acceptance, with real ``aqless-run`` processes on the test servers: heartbeats,
cancellation, SIGKILL and SIGTERM losing nothing, sync jobs in threads, the import allow list."""

from __future__ import annotations

import signal
import socket
import time
from collections import Counter
from pathlib import Path

import pytest

import aqless
from aqless.puts import PutRequest
from tests.support.worker_processes import (
    WORKER,
    Spawner,
    aq_fixture,  # noqa: F401
    count_reaches,
    eventually,
    listed,
    running_sleepers,
    spawn_fixture,  # noqa: F401
    valkey_only_fixture,  # noqa: F401
)

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.deployments(
        "valkey9",
        reason="worker processes: their signals, supervisor and children are the same whatever "
        "the server; the server paths they call run on both in the in-process worker tests",
    ),
]


async def job(aq: aqless.Client, jid: str) -> aqless.Job:
    found = await aq.jobs.get(jid)
    assert isinstance(found, aqless.Job), f"no job {jid}"
    return found


def history(found: aqless.Job) -> list[str]:
    return [entry.what for entry in found.history]


async def all_complete(aq: aqless.Client, jids: list[str]) -> list[aqless.Job]:
    """The jobs, once all complete (their code's side effects come just before)."""
    jobs: list[aqless.Job] = []

    async def complete() -> bool:
        jobs[:] = []
        for start in range(0, len(jids), 500):
            jobs.extend(await aq.jobs.get_many(jids[start : start + 500]))
        return Counter(str(found.state) for found in jobs) == {"complete": len(jids)}

    await eventually(complete, 5, "every job complete")
    assert len(jobs) == len(jids)
    return jobs


async def test_a_job_sleeping_past_several_heartbeats_never_stalls(
    aq: aqless.Client, spawn: Spawner
) -> None:
    jid = await aq.queues["q"].put("aqjobs.sleeper", {"sleep": 3.5})  # 1 s locks
    worker = spawn(*WORKER, "q")
    await count_reaches(aq, "done", 1)
    await eventually(lambda: _state(aq, jid, "complete"), 5, "the job complete")
    found = await job(aq, jid)
    assert history(found) == ["put", "popped", "done"]
    assert found.retries_left == found.original_retries
    assert "lost" not in worker.log()
    assert worker.running()


async def _state(aq: aqless.Client, jid: str, state: str) -> bool:
    return str((await job(aq, jid)).state) == state


async def test_cancelling_a_running_job_stops_its_coroutine_within_a_second(
    aq: aqless.Client, spawn: Spawner
) -> None:
    jid = await aq.queues["q"].put("aqjobs.sleeper", {"sleep": 2.0})
    worker = spawn(*WORKER, "q")
    await count_reaches(aq, "started", 1)
    started = time.monotonic()
    cancelled_at = time.time()
    await (await job(aq, jid)).cancel()
    await count_reaches(aq, "cancelled", 1, timeout=1.0)
    [entry] = await listed(aq, "cancelled")
    assert entry.split()[0] == jid
    assert float(entry.split()[1]) - cancelled_at < 1.0
    other = await aq.queues["q"].put("aqjobs.noop")
    await count_reaches(aq, "done", 1)
    await eventually(lambda: time.monotonic() - started > 2.3, 5)  # past the job's sleep
    assert await listed(aq, "done") == [other]
    assert await aq.jobs.get(jid) is None
    assert worker.running()
    assert "Complete()" not in worker.log()  # nothing was reported for the cancelled job


async def test_sigkill_in_the_middle_of_1000_jobs_loses_none(
    aq: aqless.Client, spawn: Spawner, valkey_only: None
) -> None:
    requests = [PutRequest("aqjobs.sleeper", {"sleep": 0.05}) for _ in range(1000)]
    jids = await aq.queues["q"].put_many(requests)
    first = spawn(*WORKER, "-c", "25", "q")
    await count_reaches(aq, "done", 300)
    first.send(signal.SIGKILL)
    assert await first.exited() == -signal.SIGKILL
    assert await aq.redis.llen("done") < 1000, "the worker finished before it was killed"
    spawn(*WORKER, "-c", "25", "q")
    await eventually(lambda: _all_done(aq, jids), 30, "every job's side effect")
    jobs = await all_complete(aq, jids)
    done = Counter(await listed(aq, "done"))
    duplicates = sum(done.values()) - len(done)
    assert duplicates <= 25  # only the jobs running when the first worker was killed
    reclaimed = [found for found in jobs if "timed-out" in history(found)]
    assert 0 < len(reclaimed) <= 25


async def _all_done(aq: aqless.Client, jids: list[str]) -> bool:
    return set(await listed(aq, "done")) >= set(jids)


async def test_sigterm_hands_running_jobs_back_at_once_and_loses_none(
    aq: aqless.Client, spawn: Spawner
) -> None:
    first, jids = await running_sleepers(aq, spawn, 3, "--grace", "0.2", sleep=30)
    first.send(signal.SIGTERM)
    assert await first.exited(timeout=5) == 0
    for jid in jids:  # handed back, not waiting for their locks to expire
        assert str((await job(aq, jid)).state) == "waiting"
    assert (await aq.workers.jobs(f"{socket.gethostname()}-{first.pid}")).jobs == ()
    assert "cancelled" in first.log() or await aq.redis.llen("cancelled") == 3
    await aq.redis.set("sleep", 0)
    spawn(*WORKER, "q")
    await eventually(lambda: _all_done(aq, jids), 10, "the handed-back jobs done")
    for found in await all_complete(aq, jids):
        assert "timed-out" not in history(found)


async def test_a_sync_job_does_not_block_the_other_coroutines(
    aq: aqless.Client, spawn: Spawner
) -> None:
    await aq.queues["q"].put("aqjobs.sync_sleeper", {"sleep": 2.0})
    spawn(*WORKER, "-c", "10", "q")
    await count_reaches(aq, "sync-started", 1)
    jids = [await aq.queues["q"].put("aqjobs.noop") for _ in range(5)]
    await count_reaches(aq, "done", 5, timeout=1.5)
    assert await aq.redis.llen("sync-done") == 0, "the async jobs waited for the sync one"
    await count_reaches(aq, "sync-done", 1)
    assert sorted(await listed(aq, "done")) == sorted(jids)


@pytest.mark.parametrize("klass", ["os.system", "subprocess.run", "evil.run"])
async def test_a_payload_naming_a_module_not_allowed_imports_nothing(
    aq: aqless.Client, spawn: Spawner, tmp_path: Path, klass: str
) -> None:
    jid = await aq.queues["q"].put(klass, {"command": "touch PWNED"})
    spawn(*WORKER, "q")
    await eventually(lambda: _state(aq, jid, "failed"), 10, "the job failed")
    found = await job(aq, jid)
    assert found.failure is not None
    assert found.failure.group == "q-UnknownJobClassError"
    assert "not allowed" in found.failure.message
    assert not (tmp_path / "IMPORTED").exists()
    assert not (tmp_path / "PWNED").exists()
