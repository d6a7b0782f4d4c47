"""Schedules with policies: a sync that never overlaps itself, a template paused by its
failures, and a backfill of yesterday's hourly runs.

python examples/schedules.py        (AQLESS_URL, or the embedded Valkey)
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import anyio

import aqless

handlers = aqless.Handlers()
running: list[str] = []
most_at_once = 0
synced: list[str] = []


@handlers.register("sync.Catalogue")
async def sync_catalogue(job: aqless.Job) -> None:
    global most_at_once
    running.append(job.jid)
    most_at_once = max(most_at_once, len(running))
    await anyio.sleep(2.5)  # longer than the second between its runs
    running.remove(job.jid)
    synced.append(job.jid)


@handlers.register("sync.Upstream")
async def upstream(job: aqless.Job) -> None:
    raise RuntimeError("upstream is down")


async def template(client: aqless.Client, name: str) -> aqless.RecurringJob:
    found = await client.jobs.get(name)
    assert isinstance(found, aqless.RecurringJob)
    return found


async def main() -> None:
    async with aqless.Client(namespace="example-schedules") as client:
        sync = client.queues["sync"]
        # every second, but a run still going makes the next one skip
        await sync.recur("sync.Catalogue", interval=1, name="catalogue", overlap="skip")
        # two failed runs in a row pause it until someone resumes it
        await sync.recur("sync.Upstream", interval=1, name="upstream", pause_after=2)
        worker = aqless.Worker(client, ["sync"], handlers=handlers, concurrency=4, interval=0.1)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(worker.run)
            await anyio.sleep(6)
            worker.stop()
        print(f"catalogue: {len(synced)} syncs, never two at once: {most_at_once == 1}")
        paused = await template(client, "upstream")
        print(f"upstream paused after its failures: {paused.paused and paused.failures >= 2}")

        # an hourly report added today: make yesterday's runs too, each once
        reports = client.queues["reports-backfill"]
        await reports.recur("reports.Hourly", cron="0 * * * *", name="hourly-report")
        hourly = await template(client, "hourly-report")
        today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        made = await hourly.backfill(today - timedelta(days=1), today)
        again = await hourly.backfill(today - timedelta(days=1), today)
        print(f"backfilled yesterday: {made} runs, then {again} (each once)")
        for name in ("catalogue", "upstream", "hourly-report"):
            await (await template(client, name)).cancel()


if __name__ == "__main__":
    asyncio.run(main())
