"""Puts during an outage (reliable push): a producer whose server cannot be reached keeps
its puts in a spool file; the next producer, whose server answers, sends them, in order and
each exactly once, and a worker runs them.

    python examples/spool.py        (AQLESS_URL, or the embedded Valkey)
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

import aqless

handlers = aqless.Handlers()
sent: list[str] = []


@handlers.register("mail.Receipt")
async def send_receipt(job: aqless.Job) -> None:
    sent.append(job.data["order"])


async def main() -> None:
    path = Path(tempfile.mkdtemp()) / "puts.spool"

    # a producer during an outage: nothing listens on port 1, so every put is spooled
    async with aqless.Client("redis://127.0.0.1:1", namespace="example-spool") as away:
        spool = away.spool(path=path, capacity=100)
        for order in ("A-1", "A-2", "A-3"):
            receipt = await spool.put("receipts", "mail.Receipt", {"order": order})
            how = "spooled" if receipt.spooled else "queued"
            print(f"order {order}: job {receipt.jid[:8]} {how}")
        print(f"waiting in the spool: {spool.depth}")
    # the client closed: the puts stay in the file (a crash would leave them there too)

    # the next producer, whose server answers, sends what the file holds
    async with aqless.Client(namespace="example-spool") as client:
        spool = client.spool(path=path)
        print(f"found in the file: {spool.depth}")
        await spool.flush()  # the client's own task would do it; this waits for it
        stats = spool.stats()
        print(f"flushed {stats.flushed}; waiting in the spool: {stats.depth}")
        receipt = await spool.put("receipts", "mail.Receipt", {"order": "A-4"})
        print(f"order A-4: {'spooled' if receipt.spooled else 'queued'}")
        worker = aqless.Worker(client, ["receipts"], handlers=handlers, burst=True, interval=0.1)
        await worker.run()
        print(f"receipts sent, in order: {' '.join(sent)}")


if __name__ == "__main__":
    asyncio.run(main())
