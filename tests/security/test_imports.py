"""A real ``aqless-run`` allowed to import only ``aqjobs`` gets payloads naming dangerous code,
including ways around the allow list through the allowed module itself: each job fails
with UnknownJobClassError, nothing is imported and nothing runs."""

from __future__ import annotations

from pathlib import Path

import pytest

import aqless
from tests.support.worker_processes import (
    WORKER,
    Spawner,
    aq_fixture,  # noqa: F401
    eventually,
    spawn_fixture,  # noqa: F401
    valkey_only_fixture,  # noqa: F401
)

pytestmark = pytest.mark.timeout(60)

HOSTILE = (
    "os.system",
    "subprocess.Popen",
    "subprocess.run",
    "builtins.eval",
    "builtins.exec",
    "importlib.import_module",
    "evil.run",  # a module planted on the worker's path
    "aqjobs.os.system",  # through a module the allowed one imported
    "aqjobs.os",
    "aqjobs.time.sleep",
    "aqjobs.redis.Redis",
    "aqjobs.__builtins__",
    "aqjobs.__loader__",
    "aqjobs..noop",
    "aqjobs.noop.__globals__",
    "os",
    "../evil.run",
)


async def test_hostile_class_names_import_and_run_nothing(
    aq: aqless.Client, spawn: Spawner, tmp_path: Path, valkey_only: None
) -> None:
    jids = {
        klass: await aq.queues["q"].put(klass, {"args": ["touch", str(tmp_path / "PWNED")]})
        for klass in HOSTILE
    }
    control = await aq.queues["q"].put("aqjobs.noop")
    spawn(*WORKER, "q")

    async def settled() -> bool:
        jobs = await aq.jobs.get_many([*jids.values(), control])
        return all(str(job.state) in ("failed", "complete") for job in jobs)

    await eventually(settled, 15, "every job failed or complete")
    for klass, jid in jids.items():
        job = await aq.jobs.get(jid)
        assert isinstance(job, aqless.Job)
        assert job.failure is not None, klass
        assert job.failure.group == "q-UnknownJobClassError", (klass, job.failure)
    assert await aq.redis.lrange("done", 0, -1) == [control]  # the allowed job did run
    assert not (tmp_path / "IMPORTED").exists(), "the planted module was imported"
    assert not (tmp_path / "PWNED").exists()
