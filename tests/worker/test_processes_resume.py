"""``aqless-run -n stable --resume`` after the worker of that name was killed (SIGKILL): the
job it held comes back with a new attempt and its checkpoint, resumes from the checkpoint,
and its fenced write (tests/worker/fenced_job.py) lands exactly once."""

from __future__ import annotations

import shutil
import signal
from pathlib import Path

import pytest

import aqless
from tests.support.worker_processes import (
    Spawner,
    aq_fixture,  # noqa: F401
    eventually,
    reach_states,
    spawn_fixture,  # noqa: F401
)
from tests.worker.fenced_job import KLASS, runs, writes

pytestmark = [
    pytest.mark.timeout(90),
    pytest.mark.deployments(
        "valkey9",
        reason="worker processes: worker.takeBack runs on Valkey 9 and Redis 7 in "
        "tests/scripts/test_attempts.py and tests/worker/test_fenced_runs.py",
    ),
]

JOB_MODULE = Path(__file__).with_name("fenced_job.py")
WORKER = ("-n", "stable", "-i", "fenced_job", "--interval", "0.2", "q")


async def test_a_resumed_job_comes_back_with_its_attempt_and_checkpoint(
    aq: aqless.Client, spawn: Spawner
) -> None:
    await aq.config.set("heartbeat", 60)  # the lock outlives the kill: taken back, not reclaimed
    shutil.copy(JOB_MODULE, spawn.folder / JOB_MODULE.name)
    jid = await aq.queues["q"].put(KLASS, {"checkpoint": True, "pauses": [3600]})
    first = spawn(*WORKER)

    async def checkpointed() -> bool:
        return bool((await aq.jobs.checkpoints(jid)).get(jid))

    await eventually(checkpointed, what="the first attempt checkpointed")
    first.send(signal.SIGKILL)
    await first.exited()
    spawn(*WORKER[:2], "--resume", *WORKER[2:])
    await reach_states(aq, [jid], {"complete": 1}, timeout=30)
    assert await runs(aq, jid) == ["1 null", '2 {"at": 1}']  # resumed from its checkpoint
    assert await writes(aq, jid) == ["2"]
    assert await aq.redis.hget(f"ql:j:{jid}", "attempt") == "2"
