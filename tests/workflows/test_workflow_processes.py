"""examples/workflow.py's ``steps`` under real ``aqless-run`` processes SIGKILLed: between
steps, the next worker replays the steps kept with the job and no step's function runs
twice; in the middle of a step (its effect made, its result not yet kept), that step runs
again, and only that one."""

from __future__ import annotations

import shutil
import signal
from pathlib import Path

import pytest

import aqless
from aqless.workflows.record import steps
from tests.support.worker_processes import (
    Spawner,
    aq_fixture,  # noqa: F401
    eventually,
    reach_states,
    spawn_fixture,  # noqa: F401
)

pytestmark = [
    pytest.mark.timeout(90),
    pytest.mark.deployments(
        "valkey9",
        reason="worker processes: the workflow's script calls run on Valkey 9 and Redis 7 "
        "in tests/workflows/test_workflows.py",
    ),
]

EXAMPLE = Path(__file__).parent.parent.parent / "examples" / "workflow.py"
WORKER = ("--handlers", "workflow:handlers", "--interval", "0.2", "q")


async def steps_done(aq: aqless.Client, jid: str) -> int:
    job = await aq.jobs.get(jid)
    assert isinstance(job, aqless.Job)
    return sum(step.done for step in steps(job.data))


async def test_a_killed_worker_s_workflow_runs_each_step_once(
    aq: aqless.Client, spawn: Spawner
) -> None:
    shutil.copy(EXAMPLE, spawn.folder / EXAMPLE.name)
    # ten quick steps, 0.6 s apart: a kill as soon as a step is kept lands in the pause
    jid = await aq.queues["q"].put("workflow.steps", {"count": 10, "pause": 0.6})
    for kept in (3, 7):
        worker = spawn(*WORKER)

        async def reached(kept: int = kept) -> bool:
            return await steps_done(aq, jid) >= kept

        await eventually(reached, what=f"{kept} steps kept")
        worker.send(signal.SIGKILL)
        await worker.exited()
    spawn(*WORKER)
    await reach_states(aq, [jid], {"complete": 1}, timeout=40)
    assert await aq.result(jid) == sum(range(10))
    runs = await aq.redis.hgetall(f"workflow:{jid}:runs")
    assert runs == {f"step-{n}": "1" for n in range(10)}  # no step ran twice
    job = await aq.jobs.get(jid)
    assert isinstance(job, aqless.Job)
    attempts = {step.attempt for step in steps(job.data)}
    assert len(attempts) == 3  # three attempts, each going on where the last was killed


async def test_a_step_killed_midway_runs_again_and_only_it(
    aq: aqless.Client, spawn: Spawner
) -> None:
    shutil.copy(EXAMPLE, spawn.folder / EXAMPLE.name)
    data = {"count": 5, "pause": 0, "slow_step": 2, "slow": 3}
    jid = await aq.queues["q"].put("workflow.steps", data)
    worker = spawn(*WORKER)

    async def slow_step_started() -> bool:
        return await aq.redis.hget(f"workflow:{jid}:runs", "step-2") == "1"

    await eventually(slow_step_started, what="step 2's effect made")
    worker.send(signal.SIGKILL)  # step 2 made its effect; its result is not kept
    await worker.exited()
    assert await steps_done(aq, jid) == 2
    spawn(*WORKER)
    await reach_states(aq, [jid], {"complete": 1}, timeout=40)
    runs = await aq.redis.hgetall(f"workflow:{jid}:runs")
    assert runs == {"step-0": "1", "step-1": "1", "step-2": "2", "step-3": "1", "step-4": "1"}
    job = await aq.jobs.get(jid)
    assert isinstance(job, aqless.Job)
    kept = {step.name: step.attempt for step in steps(job.data)}
    assert kept["step-1"] == 1
    assert kept["step-2"] == 2  # kept once, by the attempt that finished it


async def test_a_worker_killed_after_starting_children_starts_none_twice(
    aq: aqless.Client, spawn: Spawner
) -> None:
    shutil.copy(EXAMPLE, spawn.folder / EXAMPLE.name)
    jid = await aq.queues["q"].put("workflow.packing", {"weights": [1, 2, 3], "pause": 4})
    worker = spawn(*WORKER)  # serves q only: the children wait in "parcels"

    async def children_started() -> bool:
        return (await aq.queues["parcels"].counts()).waiting == 3

    await eventually(children_started, what="3 children put")
    worker.send(signal.SIGKILL)  # in the pause: the children put, nothing of them stored
    await worker.exited()
    job = await aq.jobs.get(jid)
    assert isinstance(job, aqless.Job)
    assert "children" not in job.data.get("_workflow", {})  # no record of them was stored
    spawn("--handlers", "workflow:handlers", "--interval", "0.2", "q", "parcels")
    await reach_states(aq, [jid], {"complete": 1}, timeout=60)
    assert await aq.result(jid) == 5 * 3 + 2 * 6
    runs = await aq.redis.hgetall("workflow:parcels:runs")
    assert sorted(runs.values()) == ["1", "1", "1"]  # three children, each run once
    assert (await aq.queues["parcels"].counts()).waiting == 0
