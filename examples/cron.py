"""Cron schedules: a recurring job spawned at the times of a cron expression in a time zone.

python examples/cron.py        (AQLESS_URL, or the embedded Valkey)
"""

from __future__ import annotations

import asyncio

import anyio

import aqless

handlers = aqless.Handlers()
ran: list[str] = []
two_runs = anyio.Event()


@handlers.register("reports.Nightly")
async def nightly(job: aqless.Job) -> None:
    ran.append(job.jid)
    if len(ran) >= 2:
        two_runs.set()


async def main() -> None:
    async with aqless.Client(namespace="example-cron") as client:
        reports = client.queues["reports"]
        # at 02:30 in Paris every night: on the night clocks jump to summer time it runs
        # at 03:00, on the night they fall back it runs once. Registered by name, as a
        # service does at every start: a second start updates the one template.
        for start in (1, 2):
            nightly_id = await reports.recur(
                "reports.Nightly",
                {"start": start},
                cron="30 2 * * *",
                tz="Europe/Paris",
                backlog=1,
                name="nightly-report",
            )
        templates = await reports.jobs("recurring")
        print(f"after two starts: {templates} (one template)")
        recurring = await client.jobs.get(nightly_id)
        assert isinstance(recurring, aqless.RecurringJob)
        assert recurring.data == {"start": 2}  # the second start's settings
        runs = await recurring.next_runs(3)
        print(f"{recurring.cron} ({recurring.tz}) next runs:", ", ".join(map(str, runs)))
        await recurring.cancel()

        # six fields: seconds first, so this one runs every second
        await reports.recur("reports.Nightly", cron="* * * * * *", name="every-second")
        worker = aqless.Worker(client, ["reports"], handlers=handlers, interval=0.1)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(worker.run)
            with anyio.fail_after(10):
                await two_runs.wait()
            worker.stop()
        await (await client.jobs.get("every-second")).cancel()  # type: ignore[union-attr]
        print(f"ran {len(ran)} jobs on the cron schedule: {', '.join(ran[:2])}")


if __name__ == "__main__":
    asyncio.run(main())
