"""Progress: job code reports how far it got (`await job.progress(0.4, "resized 4 of 10")`);
the last report is kept with the job, published as an event, drawn as a bar on the
dashboard's job and queue pages, and shown by `aqless get <jid>`.

    python examples/progress.py        (AQLESS_URL, or the embedded Valkey)
"""

from __future__ import annotations

import asyncio

import anyio
import anyio.from_thread

import aqless

handlers = aqless.Handlers()


@handlers.register("images.Resize")
async def resize(job: aqless.Job) -> None:
    images = job.data["images"]
    for n in range(1, images + 1):
        await anyio.sleep(0.01)  # resize one image
        await job.progress(n / images, f"resized {n} of {images}")


@handlers.register("images.Archive")
def archive(job: aqless.Job) -> None:  # plain code runs in a thread: report through the loop
    anyio.from_thread.run(job.progress, 0.5, "half of the archive written")
    anyio.from_thread.run(job.progress, 1, "archive written")


async def main() -> None:
    async with aqless.Client(namespace="example-progress") as client:
        queue = client.queues["images"]
        resize_jid = await queue.put("images.Resize", {"images": 10})
        archive_jid = await queue.put("images.Archive", {})
        worker = aqless.Worker(client, ["images"], handlers=handlers, burst=True, interval=0.1)
        seen: list[aqless.events.Event] = []
        finished: set[str | None] = set()
        both_done = anyio.Event()
        async with client.events("progress") as events, anyio.create_task_group() as tasks:

            async def watch() -> None:  # the events, as a dashboard or a caller sees them
                async for event in events:
                    seen.append(event)
                    if event.fraction == 1.0:
                        finished.add(event.jid)
                    if len(finished) == 2:
                        both_done.set()

            tasks.start_soon(watch)
            counters = await worker.run()
            await both_done.wait()
            tasks.cancel_scope.cancel()
        last = next(e for e in reversed(seen) if e.jid == resize_jid)
        print(f"{len(seen)} progress events; the resize's last: {last.fraction:.0%} {last.message}")
        reports = await client.jobs.progress(resize_jid, archive_jid)
        for jid in (resize_jid, archive_jid):
            print(f"{jid[:8]}: {reports[jid].fraction:.0%} {reports[jid].message}")
        assert counters.completed == 2


if __name__ == "__main__":
    asyncio.run(main())
