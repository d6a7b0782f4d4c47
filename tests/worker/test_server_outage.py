"""A worker's server stopped while jobs run, then started again (a Valkey of the test's own,
restarted in place with its data): the log says so in a few lines however many calls fail
meanwhile (one when it goes down, reminders, one when it comes back: the worker's record
failing to be written adds none), and the jobs finish."""

from __future__ import annotations

import logging
import signal
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import anyio
import pytest

import aqless
from aqless._worker import info
from tests.support.servers import RestartableValkey, restartable_valkey
from tests.support.worker import Gate, all_complete, make_worker, one, running, until
from tests.support.worker_processes import WORKER, Spawner, count_reaches

pytestmark = pytest.mark.timeout(60)

DOWN = "the server is unavailable"
STILL_DOWN = "the server has been unavailable for"
BACK = "the server is available again"
#: the parts of a worker whose failed calls used to be a warning each, every attempt
CHATTY = ("pop failed", "heartbeat failed", "of job", "cannot listen", "cannot subscribe")


@pytest.fixture
def server() -> Iterator[RestartableValkey]:
    with restartable_valkey() as started:
        yield started


@pytest.fixture
async def aq(server: RestartableValkey) -> AsyncIterator[aqless.Client]:
    async with aqless.Client(server.url, worker_name="test-worker") as client:
        yield client


@pytest.fixture
def spawn(server: RestartableValkey, tmp_path: Path) -> Iterator[Spawner]:
    spawner = Spawner(server.url, tmp_path)
    try:
        yield spawner
    finally:
        spawner.close()


def warnings_of(log: str) -> list[str]:
    return [line for line in log.splitlines() if " WARNING " in line]


async def test_aqless_run_says_in_a_few_lines_that_its_server_went_away_and_came_back(
    server: RestartableValkey, aq: aqless.Client, spawn: Spawner
) -> None:
    await aq.redis.set("sleep", 10)  # the jobs outlast the outage
    jids = [await aq.queues["q"].put("aqjobs.sleeper") for _ in range(4)]
    worker = spawn(*WORKER, "q")
    await count_reaches(aq, "started", 4)
    server.stop()
    await worker.logged(DOWN)
    await anyio.sleep(3)  # heartbeats, pops and subscriptions fail again and again meanwhile
    server.start()
    await worker.logged(BACK)
    await count_reaches(aq, "done", 4)
    worker.send(signal.SIGTERM)
    assert await worker.exited() == 0
    log = worker.log()
    assert log.count(DOWN) == 1, log
    assert log.count(BACK) == 1, log
    assert "attempts failed" in log.split(BACK)[1].splitlines()[0]
    warnings = warnings_of(log)
    assert not [line for line in warnings if any(chatty in line for chatty in CHATTY)], log
    # the outage's two lines, an event stream's one, and the SIGTERM
    assert len(warnings) <= 5, log
    assert {str(job.state) for job in await aq.jobs.get_many(jids)} == {"complete"}


async def test_a_long_outage_is_recalled_at_most_every_interval(
    server: RestartableValkey, aq: aqless.Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    await aq.config.set("heartbeat", 6)  # locks renewed every 2 s
    gate = Gate()
    jids = [await aq.queues["q"].put("app.job") for _ in range(3)]
    worker = make_worker(aq, handlers=one(gate), concurrency=4)  # and a pop now and then
    worker.outage.remind_every = 0.5
    async with running(worker):
        await until(lambda: gate.inside == 3)
        server.stop()

        def said(text: str) -> int:
            return sum(text in record.getMessage() for record in caplog.records)

        await until(lambda: said(STILL_DOWN) >= 2, timeout=20)
        server.start()
        await until(lambda: said(BACK) == 1, timeout=20)
        gate.open.set()
        await all_complete(aq, jids, timeout=20)
    assert said(DOWN) == 1
    reminders = [r.getMessage() for r in caplog.records if STILL_DOWN in r.getMessage()]
    assert all("attempts failed" in reminder for reminder in reminders)
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert not [r for r in warnings if any(chatty in r.getMessage() for chatty in CHATTY)]


async def test_the_worker_s_record_adds_no_line_of_its_own_to_an_outage(
    server: RestartableValkey,
    aq: aqless.Client,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a write a second, not every 10 s: one meets the outage within a second or two
    monkeypatch.setattr(info, "PUBLISH_EVERY", 1.0)
    caplog.set_level(logging.INFO)
    caplog.set_level(logging.DEBUG, logger=info.logger.name)  # the failed write's own line
    worker = make_worker(aq, handlers=one(Gate()))
    async with running(worker):

        async def published() -> bool:
            return bool(await aq.redis.exists(f"ql:aqless:w:{worker.name}"))

        def write_failed() -> bool:
            return any("publishing its record failed" in r.getMessage() for r in caplog.records)

        await until(published, timeout=10)
        server.stop()
        await until(write_failed, timeout=20, what="a write of the record failed")
        server.start()
        await until(lambda: any(BACK in r.getMessage() for r in caplog.records), timeout=20)
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert not [text for text in warnings if "publishing its record" in text], warnings
    assert sum(DOWN in text for text in warnings) == 1, warnings
