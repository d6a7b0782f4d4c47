"""Recurring jobs: a job spawned every `interval` seconds into a queue, until cancelled.

python examples/recurring.py        (AQLESS_URL, or the embedded Valkey)
"""

from __future__ import annotations

import asyncio

import anyio

import aqless

handlers = aqless.Handlers()
ticks: list[str] = []
two_ticks = anyio.Event()


@handlers.register("clock.Tick")
async def tick(job: aqless.Job) -> None:
    ticks.append(job.jid)  # each spawn is a job of its own: `<rjid>-<n>`
    if len(ticks) >= 2:
        two_ticks.set()


async def main() -> None:
    async with aqless.Client(namespace="example-recurring") as client:
        # by name: run again, this registers the same template rather than another one
        rjid = await client.queues["clock"].recur("clock.Tick", {}, interval=1, name="tick")
        recurring = await client.jobs.get(rjid)
        assert isinstance(recurring, aqless.RecurringJob)
        print(f"recurring job {rjid}: every {recurring.interval:g} s into {recurring.queue_name}")
        worker = aqless.Worker(client, ["clock"], handlers=handlers, interval=0.1)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(worker.run)
            with anyio.fail_after(10):
                await two_ticks.wait()  # the first spawn at once, the next a second later
            worker.stop()
        await recurring.update(interval=3600)  # change it, or stop it:
        await recurring.cancel()
        print(f"ran {len(ticks)} spawns: {', '.join(ticks[:2])}; recurring job cancelled")
        assert await client.jobs.get(rjid) is None


if __name__ == "__main__":
    asyncio.run(main())
