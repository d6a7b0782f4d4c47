"""Job progress from job code in a worker: coalesced reports, the last of which lands before
the outcome; plain functions in threads report through anyio.from_thread."""

from __future__ import annotations

import anyio
import anyio.from_thread

import aqless
from aqless import Job
from tests.support.worker import all_complete, collecting, make_worker, one, running, until


async def test_a_thousand_reports_cost_a_few_calls_and_the_last_lands(
    client: aqless.Client,
) -> None:
    async def resize(job: Job) -> None:
        for n in range(1, 1001):
            await job.progress(n / 1000, f"{n} of 1000")

    jid = await client.queues["q"].put("app.job")
    async with collecting(client, "progress") as events:
        async with running(make_worker(client, ["q"], one(resize))):
            await all_complete(client, [jid])
        reports = await client.jobs.progress(jid)
        await until(lambda: bool(events) and events[-1].fraction == 1.0)
    assert (reports[jid].fraction, reports[jid].message) == (1.0, "1000 of 1000")
    assert len(events) < 20, len(events)  # coalesced, not a call per report
    assert all(event.kind == "progress" and event.jid == jid for event in events)


async def test_reports_between_awaits_all_land_in_order(client: aqless.Client) -> None:
    async def steps(job: Job) -> None:
        for n in range(1, 4):
            await job.progress(n / 4, f"step {n}")
            await anyio.sleep(0.05)

    jid = await client.queues["q"].put("app.job")
    async with collecting(client, "progress") as events:
        async with running(make_worker(client, ["q"], one(steps))):
            await all_complete(client, [jid])
        await until(lambda: len(events) == 3)
    assert [event.message for event in events] == ["step 1", "step 2", "step 3"]


async def test_plain_code_in_a_thread_reports_through_from_thread(client: aqless.Client) -> None:
    def crunch(job: Job) -> None:
        anyio.from_thread.run(job.progress, 0.5, "half way")

    jid = await client.queues["q"].put("app.job")
    async with running(make_worker(client, ["q"], one(crunch))):
        await all_complete(client, [jid])
    report = (await client.jobs.progress(jid))[jid]
    assert (report.fraction, report.message) == (0.5, "half way")


async def test_a_bad_report_fails_the_job_as_code_that_raised(client: aqless.Client) -> None:
    async def wrong(job: Job) -> None:
        await job.progress(2.0)

    jid = await client.queues["q"].put("app.job", retries=0)
    worker = make_worker(client, ["q"], one(wrong))
    async with running(worker):
        await until(lambda: worker.counters.failed == 1)
    job = await client.jobs.get(jid)
    assert isinstance(job, Job)
    assert job.failure is not None
    assert "InvalidArgumentError" in job.failure.group
    assert await client.jobs.progress(jid) == {}
