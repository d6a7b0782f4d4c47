"""aqless-run freezes the heap it built before running (gc.freeze): the cyclic collector's
full passes then skip the modules and objects of the start, whose traversal paused the
worker for tens of milliseconds (``benchmarks/pickup_timeline.py`` saw such pauses make most
of its slowest pickups)."""

from __future__ import annotations

from pathlib import Path

import pytest

import aqless
from tests.support.worker_processes import (
    Spawner,
    aq_fixture,  # noqa: F401
    put,
    reach_states,
    spawn_fixture,  # noqa: F401
)

pytestmark = pytest.mark.timeout(30)

JOBS = """
import gc


async def frozen(job):
    await job.client.redis.rpush("frozen", gc.get_freeze_count())
"""


async def test_a_worker_process_runs_its_jobs_with_the_start_heap_frozen(
    aq: aqless.Client, spawn: Spawner, tmp_path: Path
) -> None:
    (tmp_path / "heapjobs.py").write_text(JOBS)
    jids = await put(aq, "heapjobs.frozen", 1)
    spawn("-i", "heapjobs", "q", env={"AQLESS_PATH": str(tmp_path)})
    await reach_states(aq, jids, {"complete": 1})
    [count] = await aq.redis.lrange("frozen", 0, -1)
    assert int(count) > 10_000, "the modules and objects of the start are frozen"
