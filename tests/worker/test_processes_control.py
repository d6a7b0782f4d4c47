"""Issue 42's workers under control, with real ``aqless-run`` processes: an operator's quiet
takes no new job while the running one completes, stop exits 0 within a bound, resume takes
jobs again; each honoured within a second, and said in the worker's record."""

from __future__ import annotations

import time

import anyio
import pytest

import aqless
from aqless.errors import InvalidValueError
from tests.support.worker_processes import (
    Spawner,
    WorkerProcess,
    aq_fixture,  # noqa: F401
    eventually,
    pids_and_names,
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
        reason="worker processes: the control key and event are plain commands, the same on "
        "both servers",
    ),
]

#: how long a request may take to reach a worker (it reads its key every second)
WITHIN = 1.5


async def one_sleeping(
    aq: aqless.Client, spawn: Spawner, *arguments: str, sleep: float
) -> tuple[WorkerProcess, str, str]:
    """A worker with two slots running one sleeper; its name and the sleeper's jid."""
    worker, (jid,) = await running_sleepers(aq, spawn, 1, "-c", "2", *arguments, sleep=sleep)
    ((_, name),) = await pids_and_names(aq)
    return worker, name, jid


async def mode_of(aq: aqless.Client, name: str) -> str | None:
    record = (await aq.workers.records()).get(name)
    return None if record is None else record.mode


async def reaches_mode(aq: aqless.Client, name: str, mode: str, timeout: float) -> None:
    async def there() -> bool:
        return await mode_of(aq, name) == mode

    await eventually(there, timeout, f"{name} {mode}")


async def test_quiet_takes_no_new_job_while_the_running_one_completes_then_resume(
    aq: aqless.Client, spawn: Spawner
) -> None:
    worker, name, sleeper = await one_sleeping(aq, spawn, sleep=2.5)
    await aq.workers.control(name, "quiet")
    await reaches_mode(aq, name, "quiet", WITHIN)
    later = await put(aq, "aqjobs.noop", 2)  # a free slot, and a put event: it would pop
    await reach_states(aq, [sleeper], {"complete": 1})
    await anyio.sleep(1.2)  # a poll (every second) would have taken them
    assert await states(aq, later) == {"waiting": 2}
    assert worker.running()
    assert "asked to quiet" in worker.log()
    await aq.workers.control(name, "resume")
    await reach_states(aq, later, {"complete": 2}, timeout=WITHIN + 1)
    await reaches_mode(aq, name, "running", WITHIN)


async def test_stop_finishes_the_running_job_and_exits_0_within_a_bound(
    aq: aqless.Client, spawn: Spawner
) -> None:
    worker, name, sleeper = await one_sleeping(aq, spawn, sleep=1.5)
    asked = time.monotonic()
    await aq.workers.control(name, "stop")
    await worker.logged("asked to stop", timeout=WITHIN)
    await reaches_mode(aq, name, "stopping", 0.5)
    later = await put(aq, "aqjobs.noop", 1)  # a free slot: it would pop, were it running
    assert await worker.exited(timeout=1.5 + WITHIN + 2) == 0
    assert time.monotonic() - asked < 1.5 + WITHIN + 2
    assert await states(aq, [sleeper]) == {"complete": 1}
    assert await states(aq, later) == {"waiting": 1}
    assert await aq.workers.records() == {}  # it withdrew its record
    assert await aq.redis.exists(f"ql:aqless:control:{name}") == 0  # taken


async def test_stop_hands_a_long_job_back_after_the_workers_grace(
    aq: aqless.Client, spawn: Spawner
) -> None:
    worker, name, sleeper = await one_sleeping(aq, spawn, "--grace", "0.3", sleep=30)
    await aq.workers.control(name, "stop")
    await worker.logged("asked to stop", timeout=WITHIN)
    assert await worker.exited(timeout=WITHIN + 3) == 0
    assert await states(aq, [sleeper]) == {"waiting": 1}
    found = await aq.jobs.get(sleeper)
    assert isinstance(found, aqless.Job)
    assert found.history[-1].what == "handed-back" or "grace expired" in worker.log()


async def test_a_request_is_refused_before_anything_is_written(aq: aqless.Client) -> None:
    with pytest.raises(InvalidValueError, match="worker_command"):
        await aq.workers.control("w-1", "kill")
    with pytest.raises(InvalidValueError, match="worker"):
        await aq.workers.control("", "quiet")
    assert await aq.redis.keys("ql:aqless:control:*") == []
