"""An application for test_kills.py: it commits orders, each with its outbox put in the same
transaction, rolls back one more transaction beside every other order, and relays in the
background, until the database holds TOTAL orders. The test SIGKILLs it at random points
and starts it again: it goes on from the orders committed.

Usage: python killed_app.py DATABASE_URL SERVER_URL TOTAL
"""

from __future__ import annotations

import sys

import anyio
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine

import aqless
from aqless.outbox import AsyncOutbox, Relay

ORDER = sa.text("INSERT INTO orders (n, jid) VALUES (:n, :jid)")


async def main(database: str, server: str, total: int) -> None:
    engine = create_async_engine(database)
    async with engine.connect() as connection:
        committed = (await connection.execute(sa.text("SELECT count(*) FROM orders"))).scalar()
    async with (
        aqless.Client(server) as client,
        Relay(client, database, batch=50, durable=False, interval=0.01) as relay,
        anyio.create_task_group() as tasks,
    ):
        tasks.start_soon(relay.run)
        sys.stdout.write("ready\n")
        sys.stdout.flush()
        for n in range(int(committed or 0), total):
            if n % 2 == 0:  # a transaction that rolls back: its put must make no job
                async with AsyncSession(engine) as session:
                    await session.begin()
                    jid = (
                        await AsyncOutbox(session)
                        .queues["orders"]
                        .put("app.Ship", {"order": n, "rolled_back": True})
                    )
                    await session.execute(ORDER, {"n": -1 - n, "jid": jid})
                    await session.rollback()
            async with AsyncSession(engine) as session, session.begin():
                jid = await AsyncOutbox(session).queues["orders"].put("app.Ship", {"order": n})
                await session.execute(ORDER, {"n": n, "jid": jid})
        tasks.cancel_scope.cancel()
    await engine.dispose()


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2], int(sys.argv[3]))
