"""Poison jobs: a job whose code kills its worker process (``os._exit``, SIGKILL, a segfault)
under ``aqless-run --processes 1``. Nothing can catch that in the process, so the job's lock
expires and a pop takes it back, spending one of its retries (the server's lock-expiry path);
once they are spent, the next pop fails it into ``failed-retries-<queue>``. The supervisor
replaces each dead worker after a growing, capped pause, and the other jobs complete."""

from __future__ import annotations

import re
from pathlib import Path

import anyio
import pytest

import aqless
from aqless._concurrency.backoff import RESPAWN, Delays
from aqless._worker import supervisor as _supervisor
from tests.support.worker_processes import (
    Spawner,
    aq_fixture,  # noqa: F401
    eventually,
    listed,
    put,
    reach_states,
    spawn_fixture,  # noqa: F401
    valkey_only_fixture,  # noqa: F401
)

pytestmark = [pytest.mark.faults, pytest.mark.timeout(60)]

#: The job module of these tests (``-i poisonjobs``): each attempt leaves a file named after
#: its process in ``attempts/<jid>/`` before the process dies.
POISON_JOBS = """
import ctypes
import os
import pathlib
import signal


def _attempt(job):
    folder = pathlib.Path("attempts") / job.jid
    folder.mkdir(parents=True, exist_ok=True)
    (folder / str(os.getpid())).touch()


async def exits(job):
    _attempt(job)
    os._exit(1)


async def killed(job):
    _attempt(job)
    os.kill(os.getpid(), signal.SIGKILL)


async def segfault(job):
    _attempt(job)
    ctypes.string_at(0)


async def fine(job):
    await job.client.redis.rpush("done", job.jid)
"""

#: How each kind of death reads in the supervisor's log.
DEATHS = {
    "exits": "exited with 1",
    "killed": "was killed by SIGKILL",
    "segfault": "was killed by SIGSEGV",
}
#: One retry: two deaths, two replacements (the pauses' growth to their cap is the next test's)
RETRIES = 1
PAUSE = re.compile(r"replacing it in ([0-9.]+) s")


@pytest.mark.parametrize("kind", list(DEATHS))
async def test_a_job_killing_its_worker_fails_after_its_retries_and_the_rest_completes(
    aq: aqless.Client, spawn: Spawner, tmp_path: Path, kind: str, request: pytest.FixtureRequest
) -> None:
    if kind != "exits":
        request.getfixturevalue("valkey_only")  # the same server path: one server is enough
    await aq.config.set("grace-period", 0.5)  # the first pop past a lock warns, the next takes
    (tmp_path / "poisonjobs.py").write_text(POISON_JOBS)
    others = await put(aq, "poisonjobs.fine", 3)
    poison = await aq.queues["q"].put(f"poisonjobs.{kind}", {}, retries=RETRIES)
    others += await put(aq, "poisonjobs.fine", 3)
    supervisor = spawn("-i", "poisonjobs", "--interval", "0.5", "-p", "1", "-c", "1", "q")

    await reach_states(aq, [poison], {"failed": 1}, timeout=40)
    await reach_states(aq, others, {"complete": 6})
    assert sorted(await listed(aq, "done")) == sorted(others)  # each once: none lost or repeated
    failed = await aq.jobs.get(poison)
    assert isinstance(failed, aqless.Job)
    assert failed.failure is not None
    assert failed.failure.group == "failed-retries-q"
    assert failed.failure.message == 'Job exhausted retries in queue "q"'  # the protocol's text
    attempts = list((tmp_path / "attempts" / poison).iterdir())
    assert len(attempts) == RETRIES + 1  # its try and its retries, each in a process of its own
    assert [entry.what for entry in failed.history].count("timed-out") == RETRIES + 1

    log = supervisor.log()
    assert log.count(DEATHS[kind]) == RETRIES + 1
    pauses = [float(pause) for pause in PAUSE.findall(log)]
    assert len(pauses) == RETRIES + 1
    for crashes, pause in enumerate(pauses, start=1):  # doubling, jittered, never past the cap
        ceiling = min(RESPAWN.first * 2 ** (crashes - 1), RESPAWN.cap)
        assert ceiling / 2 - 0.05 <= pause <= ceiling + 0.05, pauses
    assert pauses == sorted(pauses)
    assert supervisor.running()
    assert len(supervisor.children()) == 1  # a worker serving again after the last pause


async def test_the_supervisor_pauses_grow_to_their_cap_for_a_worker_crashing_at_start(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A worker that dies at once, again and again (here: an unknown option), is replaced
    after pauses that double up to the cap and stay there."""
    respawn = Delays(0.2, 0.8)
    supervisor = _supervisor.Supervisor(
        ["--no-such-option", "q"], processes=1, name=None, respawn=respawn
    )
    caplog.set_level("WARNING", logger="aqless._worker.supervisor")

    def pauses() -> list[float]:
        return [_pause(record.getMessage()) for record in caplog.records]

    async with anyio.create_task_group() as group:
        group.start_soon(supervisor.run)
        await eventually(lambda: len(pauses()) >= 6, 30, "six replacements")
        supervisor.stopping = True
    seen = pauses()
    ceilings = [0.2, 0.4, 0.8, 0.8, 0.8, 0.8]
    for pause, ceiling in zip(seen, ceilings, strict=False):
        assert ceiling / 2 - 0.05 <= pause <= ceiling + 0.05, seen  # logged to 0.1 s
    assert all("worker 1 exited with 2" in record.getMessage() for record in caplog.records)


def _pause(line: str) -> float:
    found = PAUSE.search(line)
    assert found, line
    return float(found.group(1))
