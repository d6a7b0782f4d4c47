"""examples/checkpointed_import.py under real ``aqless-run`` processes: a worker stopped
mid-import (SIGTERM: the job is handed back; SIGKILL: its lock expires) leaves a checkpoint,
and the next worker's attempt resumes from it: no row is imported twice, and the second
attempt starts at the checkpointed offset."""

from __future__ import annotations

import shutil
import signal
from collections import Counter
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

pytestmark = [
    pytest.mark.timeout(90),
    pytest.mark.deployments(
        "valkey9",
        reason="worker processes: the checkpoint's script calls run on Valkey 9 and Redis 7 "
        "in tests/scripts/test_checkpoints.py and tests/test_checkpoints.py",
    ),
]

EXAMPLE = Path(__file__).parent.parent.parent / "examples" / "checkpointed_import.py"
KLASS = "checkpointed_import.import_rows"
WORKER = ("-i", "checkpointed_import", "--interval", "0.2", "--grace", "0.2", "q")


async def offset(aq: aqless.Client, jid: str) -> int:
    state = (await aq.jobs.checkpoints(jid)).get(jid) or {}
    return int(state.get("offset", 0))


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGKILL], ids=["TERM", "KILL"])
async def test_a_stopped_import_resumes_from_its_checkpoint(
    aq: aqless.Client, spawn: Spawner, number: signal.Signals
) -> None:
    shutil.copy(EXAMPLE, spawn.folder / EXAMPLE.name)
    # 10 batches of 1,000 rows, half a second apart: the signal lands between two batches
    jid = await aq.queues["q"].put(KLASS, {"rows": 10_000, "batch": 1_000, "pause": 0.5})
    first = spawn(*WORKER)

    async def three_batches_in() -> bool:
        return await offset(aq, jid) >= 3_000

    await eventually(three_batches_in, what="3 batches checkpointed")
    first.send(number)
    await first.exited()
    stopped_at = await offset(aq, jid)
    job = await aq.jobs.get(jid)
    assert isinstance(job, aqless.Job)
    if number == signal.SIGTERM:  # handed back at once; a killed worker's lock expires
        assert (str(job.state), job.history[-1].what) == ("waiting", "handed-back")

    spawn(*WORKER)
    await reach_states(aq, [jid], {"complete": 1}, timeout=30)
    imported = Counter(await aq.redis.lrange(f"import:{jid}:rows", 0, -1))
    assert len(imported) == 10_000
    assert set(imported.values()) == {1}  # no row imported twice
    starts = await aq.redis.hgetall(f"import:{jid}:starts")
    assert {int(n): int(at) for n, at in starts.items()} == {1: 0, 2: stopped_at}
    assert stopped_at >= 3_000  # resumed, not restarted
    assert await aq.jobs.checkpoints(jid) == {}  # completion cleared it
