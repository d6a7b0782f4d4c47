"""Job progress through the client: `job.progress` from the job's holder, `client.jobs.progress`,
and the typed `'progress'` event of `client.events()`."""

from __future__ import annotations

import math

import anyio
import pytest

import aqless
from aqless import (
    InvalidArgumentError,
    JobNotFoundError,
    LockLostError,
    Progress,
    StaleAttemptError,
)
from tests.support.clients import get_job, pop_one

pytest_plugins = ["tests.support.client_fixtures"]


async def test_a_report_is_stored_and_read_back(client: aqless.Client) -> None:
    queue = client.queues["q"]
    jid = await queue.put("Klass", {})
    other = await queue.put("Klass", {})
    job = await pop_one(queue)
    await job.progress(0.4, "resized 4 of 10")
    reports = await client.jobs.progress(jid, other, "missing")
    assert list(reports) == [jid]
    assert reports[jid].fraction == 0.4
    assert reports[jid].message == "resized 4 of 10"
    assert abs(reports[jid].at - client.clock()) < 60
    assert await client.jobs.progress() == {}


async def test_client_events_yield_a_typed_progress_event(client: aqless.Client) -> None:
    queue = client.queues["q"]
    jid = await queue.put("Klass", {})
    job = await pop_one(queue)
    async with client.events() as events:
        await job.progress(1, "done")
        with anyio.fail_after(5):
            event = await anext(aiter(events))
    assert (event.kind, event.jid, event.queue, event.worker) == (
        "progress",
        jid,
        "q",
        job.worker_name,
    )
    assert (event.fraction, event.message) == (1.0, "done")
    assert event.channel == f"{client.prefix}progress"


@pytest.mark.parametrize(
    ("fraction", "message"),
    [
        (1.5, ""),
        (-0.01, ""),
        (math.nan, ""),
        (math.inf, ""),
        ("0.5", ""),
        (True, ""),
        (0.5, "x" * 1025),
        (0.5, "é" * 513),
        (0.5, None),
    ],
)
async def test_a_bad_report_is_refused_before_it_is_sent(
    client: aqless.Client, fraction: object, message: object
) -> None:
    queue = client.queues["q"]
    jid = await queue.put("Klass", {})
    job = await pop_one(queue)
    with pytest.raises(InvalidArgumentError):
        await job.progress(fraction, message)  # type: ignore[arg-type]
    assert await client.jobs.progress(jid) == {}


async def test_a_message_of_1024_bytes_is_taken(client: aqless.Client) -> None:
    queue = client.queues["q"]
    jid = await queue.put("Klass", {})
    job = await pop_one(queue)
    await job.progress(0, "é" * 512)
    assert (await client.jobs.progress(jid))[jid].message == "é" * 512


async def test_a_job_no_longer_held_refuses_reports(client: aqless.Client) -> None:
    queue = client.queues["q"]
    jid = await queue.put("Klass", {})
    job = await pop_one(queue)
    await (await get_job(client, jid)).timeout()
    with pytest.raises(LockLostError):
        await job.progress(0.5)
    again = await pop_one(queue, worker="someone-else")
    with pytest.raises(StaleAttemptError, match="attempt 1 is stale"):  # a LockLostError
        await job.progress(0.5)
    await again.complete()
    with pytest.raises(LockLostError):
        await again.progress(0.5)
    await queue.put("Klass", {})
    gone = await pop_one(queue)
    await client.jobs.cancel(gone.jid)
    with pytest.raises(JobNotFoundError):
        await gone.progress(0.5)


async def test_the_last_report_stays_through_a_retry(client: aqless.Client) -> None:
    queue = client.queues["q"]
    jid = await queue.put("Klass", {}, retries=2)
    job = await pop_one(queue)
    await job.progress(0.7, "nearly")
    await job.retry()
    kept = (await client.jobs.progress(jid))[jid]
    assert (kept.fraction, kept.message) == (0.7, "nearly")
    again = await pop_one(queue)
    await again.progress(0.1, "from the start")
    assert (await client.jobs.progress(jid))[jid].fraction == 0.1


def test_progress_from_json_defaults() -> None:
    assert Progress.from_json({}) == Progress(0.0, "", 0.0)
