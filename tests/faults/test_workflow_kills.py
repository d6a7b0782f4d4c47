"""The random-kill workload (issue 41): ten-step workflows (tests/faults/killed_workflow.py)
run by a real ``aqless-run`` process, SIGKILLed at random moments and replaced. Each step
writes its effect into SQLite through the job's attempt fence. Checked once every workflow
completes: each step's effect recorded exactly once, each result right, and no step's
function run after its result was stored (no run by an attempt later than the one that
kept the result, and one run by that attempt).

Five workflows run in the fault suite; a hundred under ``faults_long`` (``nox -s
faults_long``), which prints its figures.

The race workload (tests/faults/raced_workflow.py): workflows race two children
(``ctx.first``) under a worker killed at random once a race was decided; every run past a
race must see the same winner."""

from __future__ import annotations

import random
import shutil
import signal
import sqlite3
import time
from collections import Counter
from pathlib import Path

import anyio
import pytest

import aqless
from aqless.workflows.children import child_jid
from aqless.workflows.record import KEY, steps
from tests.faults import killed_workflow, raced_workflow
from tests.support.worker_processes import (
    Spawner,
    aq_fixture,  # noqa: F401
    eventually,
    spawn_fixture,  # noqa: F401
    states,
)

pytestmark = [
    pytest.mark.faults,
    pytest.mark.timeout(900),
    pytest.mark.deployments("valkey9", reason="worker processes killed: one server kind"),
]

MODULE = Path(killed_workflow.__file__)
WORKER = ("--handlers", "killed_workflow:handlers", "-c", "100", "--interval", "0.2", "q")
RESULT = sum(n * n for n in range(killed_workflow.STEPS))


async def kept_any(aq: aqless.Client, jids: list[str]) -> bool:
    jobs = await aq.jobs.get_many(jids)
    return any(step.done for job in jobs for step in steps(job.data))


@pytest.mark.parametrize(
    ("workflows", "kills"),
    [
        pytest.param(5, 4, id="5-runs"),
        pytest.param(100, 40, id="100-runs", marks=pytest.mark.faults_long),
    ],
)
async def test_killed_workers_make_each_step_s_effect_once_and_never_rerun_a_kept_step(
    aq: aqless.Client, spawn: Spawner, workflows: int, kills: int
) -> None:
    path = str(spawn.folder / "effects.db")
    killed_workflow.create(path)
    shutil.copy(MODULE, spawn.folder / MODULE.name)
    env = {"KILLED_WORKFLOW_DB": path}
    jids = [
        await aq.queues["q"].put("killed_workflow.ten", {}, retries=10 * kills)
        for _ in range(workflows)
    ]
    chance = random.Random(41)  # noqa: S311
    started = time.monotonic()
    worker = spawn(*WORKER, env=env)
    await eventually(lambda: kept_any(aq, jids), what="a step kept")
    killed = 0
    while (await states(aq, jids))["complete"] < workflows:
        assert time.monotonic() - started < 600, "the workflows did not finish"
        await anyio.sleep(chance.uniform(0.2, 1.5))
        if killed < kills:  # every workflow in flight is cut short, wherever it is
            worker.send(signal.SIGKILL)
            await worker.exited()
            killed += 1
            worker = spawn(*WORKER, env=env)
    elapsed = time.monotonic() - started

    stored: dict[tuple[str, int], int] = {}
    attempts: dict[str, set[int]] = {}  # the attempts that kept each workflow's steps
    for jid in jids:
        assert await aq.result(jid) == RESULT
        job = await aq.jobs.get(jid)
        assert isinstance(job, aqless.Job)
        for kept in steps(job.data):
            assert kept.done
            assert kept.attempt is not None
            stored[jid, int(kept.name.removeprefix("step-"))] = kept.attempt
            attempts.setdefault(jid, set()).add(kept.attempt)
    assert len(stored) == workflows * killed_workflow.STEPS
    with sqlite3.connect(path) as db:
        effects = Counter(db.execute("SELECT jid, step FROM effects"))
        runs = list(db.execute("SELECT jid, step, attempt FROM runs"))
    assert effects == Counter(dict.fromkeys(stored, 1))  # each step's effect, once
    late = [(jid, n, a) for jid, n, a in runs if a > stored[jid, n]]
    assert late == []  # no step ran in an attempt after the one that kept its result
    keeping = Counter((jid, n) for jid, n, a in runs if a == stored[jid, n])
    assert keeping == Counter(dict.fromkeys(stored, 1))  # and once in that attempt
    again = len(runs) - len(stored)  # runs cut short by a kill, made again by a later attempt
    killed_midway = sum(1 for jid in jids if len(attempts[jid]) > 1)
    assert killed == kills
    assert killed_midway >= 1, "no kill landed in a workflow"
    print(  # noqa: T201
        f"\n{workflows} workflows, {killed} kills in {elapsed:.1f} s: {killed_midway} "
        f"kept steps in more than one attempt, {again} step "
        f"runs made again after a kill cut them short, 0 effects twice, 0 runs after a kept "
        f"result"
    )


RACER = ("--handlers", "raced_workflow:handlers", "-c", "100", "--interval", "0.2", "races", "legs")


async def test_killed_workers_keep_each_race_s_winner_over_every_replay(
    aq: aqless.Client, spawn: Spawner
) -> None:
    """Workflows race two children (tests/faults/raced_workflow.py) under a worker killed at
    random moments: every run of a workflow that got past its race saw the same winner, which
    is the one the server and the record keep, the first of the two to complete when the race
    waited for them; each child was put once."""
    workflows, kills = 10, 8
    path = str(spawn.folder / "races.db")
    raced_workflow.create(path)
    shutil.copy(raced_workflow.__file__, spawn.folder / "raced_workflow.py")
    env = {"RACED_WORKFLOW_DB": path}
    jids = [
        await aq.queues["races"].put("raced_workflow.race", {}, retries=10 * kills)
        for _ in range(workflows)
    ]
    chance = random.Random(411)  # noqa: S311
    started = time.monotonic()
    worker = spawn(*RACER, env=env)

    def decided_any() -> bool:  # the kills begin once a race was decided
        with sqlite3.connect(path) as db:
            return db.execute("SELECT 1 FROM seen").fetchone() is not None

    await eventually(decided_any, what="a race decided")
    killed = 0
    while (await states(aq, jids))["complete"] < workflows:
        assert time.monotonic() - started < 300, "the workflows did not finish"
        await anyio.sleep(chance.uniform(0.1, 0.6))
        if killed < kills:
            worker.send(signal.SIGKILL)
            await worker.exited()
            killed += 1
            worker = spawn(*RACER, env=env)

    with sqlite3.connect(path) as db:
        seen = list(db.execute("SELECT jid, attempt, winner FROM seen"))
        legs = {jid for (jid,) in db.execute("SELECT jid FROM legs")}
    replayed = 0
    for jid in jids:
        winner = await aq.result(jid)
        runs = [(attempt, name) for j, attempt, name in seen if j == jid]
        assert {name for _, name in runs} == {winner}  # every run past the race: one winner
        replayed += len({attempt for attempt, _ in runs}) > 1
        job = await aq.jobs.get(jid)
        assert isinstance(job, aqless.Job)
        kept = child_jid(jid, winner)
        assert job.data[KEY]["firsts"]["1"]["winner"] == kept
        assert await aq.redis.hget(f"ql:j:{jid}", "wf-won:1") == kept
        reasons = {entry.details.get("reason") for entry in job.history}
        if "waiting for the first of its children" in reasons:
            done = {}
            for name in ("a", "b"):
                leg = await aq.jobs.get(child_jid(jid, name))
                assert isinstance(leg, aqless.Job)
                done[name] = max(e.when for e in leg.history if e.what == "done")
            assert done[winner] == min(done.values())
    assert legs == {child_jid(jid, name) for jid in jids for name in ("a", "b")}  # put once
    assert killed == kills
    assert replayed >= 1, "no kill landed after a race was decided"
    print(  # noqa: T201
        f"\n{workflows} races, {killed} kills: {replayed} replayed past a decided race, "
        "each run saw its workflow's winner"
    )
