"""Middleware around every job: here a database session per job, committed when the code
returns and rolled back when it raises (sqlite3 from the standard library stands in for
your database; SQLAlchemy's ``async_sessionmaker`` fits the same shape).

    python examples/middleware.py       (AQLESS_URL, or the embedded Valkey)
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import sqlite3
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import aqless

handlers = aqless.Handlers()
database = Path(tempfile.mkdtemp()) / "shop.db"
#: the job's session, for the job's code (a contextvar: each job runs in its own task)
session: contextvars.ContextVar[sqlite3.Connection] = contextvars.ContextVar("session")


@contextlib.asynccontextmanager
async def database_session(job: aqless.Job) -> AsyncIterator[None]:
    connection = sqlite3.connect(database)
    token = session.set(connection)
    try:
        yield
        connection.commit()  # the code returned: keep its writes
    except BaseException:
        connection.rollback()  # it raised (or was cancelled): drop them
        raise
    finally:
        session.reset(token)
        connection.close()


@handlers.register("shop.Order")
async def order(job: aqless.Job) -> None:
    session.get().execute("INSERT INTO orders (item) VALUES (?)", (job.data["item"],))
    if job.data["item"] == "unicorn":
        raise LookupError("out of unicorns")  # the insert above is rolled back


async def main() -> None:
    with sqlite3.connect(database) as setup:
        setup.execute("CREATE TABLE orders (item TEXT)")
    async with aqless.Client(namespace="example-middleware") as client:
        for item in ("book", "unicorn", "lamp"):
            await client.queues["orders"].put("shop.Order", {"item": item})
        worker = aqless.Worker(
            client,
            ["orders"],
            handlers=handlers,
            middleware=[database_session],  # outermost first; also per handler
            burst=True,
            interval=0.1,
        )
        counters = await worker.run()
    with contextlib.closing(sqlite3.connect(database)) as check:
        items = [row[0] for row in check.execute("SELECT item FROM orders ORDER BY item")]
    print(f"{counters.completed} completed, {counters.failed} failed; stored: {items}")
    assert items == ["book", "lamp"]


if __name__ == "__main__":
    asyncio.run(main())
