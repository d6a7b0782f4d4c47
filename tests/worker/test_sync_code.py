"""Plain (sync) job code in worker threads: a thread cannot be stopped, so a job whose code is
timed out or taken away keeps its slot until its thread returns, and the worker says so."""

from __future__ import annotations

import logging
import threading
from typing import Literal

import anyio
import pytest

import aqless
from aqless import Job, JobState
from tests.support.worker import get_job, make_worker, one, running, until, until_state


class BlockingGate:
    """Sync job code that blocks until the test opens the gate; counts the bodies inside."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self._lock = threading.Lock()
        self.inside = 0
        self.most = 0
        self.entered: list[str] = []

    def __call__(self, job: Job) -> None:
        with self._lock:
            self.inside += 1
            self.most = max(self.most, self.inside)
            self.entered.append(job.jid)
        try:
            if not self.open.wait(10):
                raise RuntimeError("the test never opened the gate")
        finally:
            with self._lock:
                self.inside -= 1


@pytest.mark.parametrize("how", ["timeout", "cancel"])
async def test_sync_code_cut_off_keeps_its_slot_until_it_returns(
    client: aqless.Client,
    caplog: pytest.LogCaptureFixture,
    how: Literal["timeout", "cancel"],
) -> None:
    caplog.set_level(logging.WARNING, logger="aqless._worker")
    gate = BlockingGate()
    handlers = one(gate, timeout=0.3 if how == "timeout" else None)
    jids = [await client.queues["q"].put("app.job") for _ in range(4)]
    worker = make_worker(client, ["q"], handlers, concurrency=2)
    try:
        async with running(worker):
            await until(lambda: len(gate.entered) == 2)
            first = list(gate.entered)
            if how == "cancel":
                for jid in first:
                    await (await get_job(client, jid)).cancel()
                await until(lambda: worker.counters.lost == 2)
            else:
                for jid in first:
                    failed = await until_state(client, jid, JobState.FAILED)
                    assert failed.failure is not None
                    assert failed.failure.group == "q-JobTimeoutError"
            # time for the worker to take the other jobs, had it freed the slots (it must not)
            with anyio.move_on_after(1.0):
                while len(gate.entered) < 3:  # noqa: ASYNC110  # nothing to await: an absence
                    await anyio.sleep(0.01)
            assert gate.entered == first
            assert len(worker.running) == 2
            gate.open.set()
            for jid in set(jids) - set(first):
                await until_state(client, jid, JobState.COMPLETE)
    finally:
        gate.open.set()
    assert gate.most == 2, f"{gate.most} job bodies ran at once with 2 slots"
    if how == "cancel":
        assert [await client.jobs.get(jid) for jid in first] == [None, None]
        assert worker.counters.failed == 0
    else:
        assert worker.counters.failed == 2
    assert worker.counters.completed == 2
    overran = [r.getMessage() for r in caplog.records if "returned" in r.getMessage()]
    assert len(overran) == 2, overran
    for jid in first:
        assert any(jid in message for message in overran), (jid, overran)


async def test_a_stopping_worker_hands_sync_code_back_and_returns_once_it_has(
    client: aqless.Client,
) -> None:
    gate = BlockingGate()
    jid = await client.queues["q"].put("app.job")
    worker = make_worker(client, ["q"], one(gate), grace=0.2)
    try:
        async with running(worker) as run:
            await until(lambda: len(gate.entered) == 1)
            worker.stop()
            job = await until_state(client, jid, JobState.WAITING)  # handed back after grace
            assert job.history[-1].what == "handed-back"
            assert job.retries_left == job.original_retries
            assert worker.state == "stopping"  # its slot waits for the thread
            assert gate.inside == 1
            gate.open.set()
            counters = await run.stopped()
    finally:
        gate.open.set()
    assert gate.inside == 0
    assert counters.handed_back == 1
