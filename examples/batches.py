"""Batches: N jobs tracked as one. The server puts a callback job once when every member
completed (on_success), when none is pending (on_complete), and at the first member that
failed for good (on_death); `client.batches.get` reads the live totals.

    python examples/batches.py        (AQLESS_URL, or the embedded Valkey)
"""

from __future__ import annotations

import asyncio

import aqless
from aqless import BatchCallback, PutRequest

handlers = aqless.Handlers()
reports: list[str] = []


@handlers.register("thumbs.Resize")
async def resize(job: aqless.Job) -> None:
    if job.data["image"] == "broken.png":
        raise ValueError("not an image")


@handlers.register("thumbs.Report")
async def report(job: aqless.Job) -> None:
    batch = job.data["batch"]
    if batch["event"] == "death":  # at the first failure: the others may still run
        reports.append(f"death: a member of album {job.data['album']} failed")
    else:
        reports.append(f"{batch['event']}: {batch['done']} done, {batch['failed']} failed")


async def main() -> None:
    async with aqless.Client(namespace="example-batches") as client:
        images = ["a.png", "b.png", "c.png", "broken.png"]
        members = [
            ("thumbs", PutRequest("thumbs.Resize", {"image": image}, retries=0)) for image in images
        ]
        callback = BatchCallback("thumbs.Report", "reports", {"album": 7})
        bid = await client.batches.put(
            members,
            on_success=callback,
            on_complete=callback,
            on_death=callback,
            description="album 7 thumbnails",
        )
        batch = await client.batches.get(bid)
        assert batch is not None
        print(f"put {batch.total} jobs as batch {batch.description!r}: {batch.pending} pending")

        worker = aqless.Worker(
            client, ["thumbs", "reports"], handlers=handlers, burst=True, interval=0.1
        )
        await worker.run()
        batch = await client.batches.get(bid)
        assert batch is not None
        print(f"{batch.state}: {batch.done} done, {batch.failed} failed")
        for line in sorted(reports):
            print(f"callback {line}")
        assert sorted(reports) == [
            "complete: 3 done, 1 failed",
            "death: a member of album 7 failed",
        ]


if __name__ == "__main__":
    asyncio.run(main())
