"""Transactional enqueue: an order and its receipt job commit together or not at all. The
put is a row of the order's own transaction (aqless.outbox); a relay moves committed rows to
the server, each as one job; a rolled-back order puts nothing.

    python examples/outbox.py        (AQLESS_URL, or the embedded Valkey; SQLite in a
                                      temporary folder)
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, create_async_engine

import aqless
from aqless.outbox import AsyncOutbox, Relay, create_outbox_table

handlers = aqless.Handlers()
receipts: list[int] = []


@handlers.register("shop.SendReceipt")
async def send_receipt(job: aqless.Job) -> None:
    receipts.append(job.data["order"])


ORDER = sa.text("INSERT INTO orders (id, receipt_jid) VALUES (:id, :jid)")


async def place(engine: AsyncEngine, order: int, *, pay: bool) -> None:
    """Save an order with its receipt job in one transaction; an unpaid one rolls back."""
    async with AsyncSession(engine) as session, session.begin():
        jid = (
            await AsyncOutbox(session).queues["receipts"].put("shop.SendReceipt", {"order": order})
        )
        await session.execute(ORDER, {"id": order, "jid": jid})
        if not pay:
            await session.rollback()


async def main() -> None:
    database = Path(tempfile.mkdtemp()) / "shop.db"
    blocking = sa.create_engine(f"sqlite:///{database}")
    create_outbox_table(blocking)
    with blocking.begin() as connection:
        connection.exec_driver_sql("CREATE TABLE orders (id INTEGER PRIMARY KEY, receipt_jid TEXT)")
    engine = create_async_engine(f"sqlite+aiosqlite:///{database}")

    for order, pay in ((1, True), (2, False), (3, True)):
        await place(engine, order, pay=pay)
    async with aqless.Client(namespace="example-outbox") as client:
        relay = Relay(client, blocking, durable=False)
        print(f"waiting in the outbox: {(await relay.stats()).pending}")
        print(f"relayed {await relay.drain()} puts")
        print(f"relayed again: {await relay.drain()}")  # nothing left, nothing doubled
        worker = aqless.Worker(client, ["receipts"], handlers=handlers, burst=True)
        await worker.run()
        print(f"receipts sent for orders {sorted(receipts)}")
        assert sorted(receipts) == [1, 3]
    await engine.dispose()
    blocking.dispose()


if __name__ == "__main__":
    asyncio.run(main())
