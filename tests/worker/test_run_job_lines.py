"""aqless-run's log of each job: by default an error line for each job it failed (class,
queue, failure group, the exception's type and text) and nothing else, a line per outcome
with -v (jid, class, queue, outcome, duration), and a line at each start as well with -vv."""

from __future__ import annotations

import json
import re
import signal

import pytest

import aqless
from tests.support.worker_processes import (
    WORKER,
    Spawner,
    WorkerProcess,
    aq_fixture,  # noqa: F401
    put,
    reach_states,
    spawn_fixture,  # noqa: F401
)

pytestmark = pytest.mark.timeout(30)


async def worked(
    aq: aqless.Client, spawn: Spawner, verbosity: int, *arguments: str
) -> tuple[WorkerProcess, str, str]:
    """A worker that ran one job that completes and one that fails, then stopped: the
    process, and the two jids."""
    done = await put(aq, "aqjobs.noop", 1)
    failed = await put(aq, "nowhere.Job", 1)
    worker = spawn(*WORKER, *arguments, "q", verbosity=verbosity)
    await reach_states(aq, [*done, *failed], {"complete": 1, "failed": 1}, timeout=20)
    await worker.logged("serving")  # (the log is in order)
    worker.send(signal.SIGTERM)
    assert await worker.exited() == 0
    return worker, done[0], failed[0]


def outcome_line(log: str, jid: str) -> str:
    lines = [line for line in log.splitlines() if f"job {jid} (" in line and " in " in line]
    assert len(lines) == 1, log
    return lines[0]


async def test_by_default_no_job_is_logged(aq: aqless.Client, spawn: Spawner) -> None:
    jids = await put(aq, "aqjobs.noop", 3)
    worker = spawn(*WORKER, "q", verbosity=0)
    await reach_states(aq, jids, {"complete": 3}, timeout=20)
    worker.send(signal.SIGTERM)
    assert await worker.exited() == 0
    log = worker.log()
    assert not [jid for jid in jids if jid in log], log


async def test_by_default_a_failed_job_is_an_error_line_with_its_group_and_message(
    aq: aqless.Client, spawn: Spawner
) -> None:
    (spawn.folder / "broken.py").write_text(BROKEN)
    done = await put(aq, "aqjobs.noop", 1)
    raised = await aq.queues["q"].put("broken.parse", {"n": 7})
    unknown = await put(aq, "nowhere.Job", 1)
    worker = spawn(*WORKER, "-i", "broken", "q", verbosity=0)
    await reach_states(aq, [*done, raised, *unknown], {"complete": 1, "failed": 2}, timeout=20)
    worker.send(signal.SIGTERM)
    assert await worker.exited() == 0
    log = worker.log()
    assert done[0] not in log, log
    line = only_line(log, raised)
    assert " ERROR " in line
    assert line.endswith(
        f"job {raised} (broken.parse, queue q): failed into q-ValueError: "
        "ValueError: bad input 7 (one line of two) …"
    ), line
    line = only_line(log, unknown[0])
    assert " ERROR " in line
    assert re.search(
        rf"job {unknown[0]} \(nowhere\.Job, queue q\): failed into q-UnknownJobClassError: "
        r"UnknownJobClassError: \S.*$",
        line,
    ), line


BROKEN = """
async def parse(job):
    raise ValueError(f"bad input {job.data['n']} (one line of two)\\nthe second line")
"""


def only_line(log: str, jid: str) -> str:
    lines = [line for line in log.splitlines() if jid in line]
    assert len(lines) == 1, log
    return lines[0]


async def test_v_logs_each_job_s_outcome(aq: aqless.Client, spawn: Spawner) -> None:
    worker, done, failed = await worked(aq, spawn, 1)
    log = worker.log()
    completed = outcome_line(log, done)
    assert " INFO " in completed
    assert re.search(rf"job {done} \(aqjobs\.noop, queue q\): completed in \d+\.\d+ s$", completed)
    refused = outcome_line(log, failed)
    assert " ERROR " in refused
    assert re.search(
        rf"job {failed} \(nowhere\.Job, queue q\): failed into q-UnknownJobClassError: "
        r"UnknownJobClassError: \S.* in [\d.]+ s$",
        refused,
    ), refused
    assert "): started" not in log


async def test_vv_logs_each_job_s_start_as_well(aq: aqless.Client, spawn: Spawner) -> None:
    worker, done, failed = await worked(aq, spawn, 2)
    log = worker.log()
    for jid, klass in ((done, "aqjobs.noop"), (failed, "nowhere.Job")):
        assert f"job {jid} ({klass}, queue q): started" in log, log
        outcome_line(log, jid)
        assert log.index(f"job {jid} ({klass}, queue q): started") < log.index(
            outcome_line(log, jid)
        )


async def test_the_json_log_has_each_job_s_facts_as_fields(
    aq: aqless.Client, spawn: Spawner
) -> None:
    worker, done, failed = await worked(aq, spawn, 1, "--log-json")
    entries = [json.loads(line) for line in worker.log().splitlines() if line]
    outcomes = {entry["jid"]: entry for entry in entries if "outcome" in entry}
    assert set(outcomes) == {done, failed}
    assert outcomes[done]["klass"] == "aqjobs.noop"
    assert outcomes[done]["queue"] == "q"
    assert outcomes[done]["outcome"] == "completed"
    assert outcomes[done]["raised"] is None
    assert isinstance(outcomes[done]["seconds"], float)
    assert outcomes[failed]["outcome"] == "failed"
    assert outcomes[failed]["raised"] == "UnknownJobClassError"
    assert outcomes[failed]["level"] == "error"
    assert outcomes[failed]["group"] == "q-UnknownJobClassError"
    assert outcomes[failed]["failure"].startswith("UnknownJobClassError: ")
