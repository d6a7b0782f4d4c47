"""Transactional enqueue: puts written into an outbox table in the application's own
database transaction, and a relay that moves the committed ones to the server.

A put made after the commit (an after-commit hook) is lost if the process dies between the
commit and the put; one made before it makes a job for a transaction that may roll back.
The outbox's put is a row written in the transaction itself: it commits with the
application's data or not at all, and the relay turns each committed row into exactly one
job, under the jid chosen at the call.

- `Outbox` (SQLAlchemy `Session`/`Connection`), `AsyncOutbox` (`AsyncSession`/
  `AsyncConnection`) and `DjangoOutbox` write the rows: ``outbox.queues["emails"].put(...)``
  takes what ``client.queues["emails"].put(...)`` takes, and refuses at the call what it
  would refuse.
- `Relay` moves them: in-process, ``aqless outbox relay --database URL``, or
  ``aqless-run --outbox-url URL`` beside a worker.
- `create_outbox_table`, `outbox_table` and `outbox_ddl` make the table.

Needs the ``outbox`` extra (SQLAlchemy with its asyncio support, psycopg for PostgreSQL,
aiosqlite for asyncio SQLite); without it, importing this package raises the
ConfigurationError that names it. Importing it imports no asyncio part of SQLAlchemy:
blocking and Django applications need none.
"""

from __future__ import annotations

from aqless.errors import needs_extra

with needs_extra("outbox", "aqless.outbox"):
    import sqlalchemy  # noqa: F401

from aqless.outbox.for_django import DjangoOutbox
from aqless.outbox.for_sqlalchemy import AsyncOutbox, Outbox
from aqless.outbox.queues import AsyncOutboxQueue, OutboxQueue
from aqless.outbox.record import OutboxRecord
from aqless.outbox.relay import RETRY, Relay, RelayDurability, RelayReport
from aqless.outbox.store import OutboxStats
from aqless.outbox.table import (
    TABLE_NAME,
    create_outbox_table,
    outbox_ddl,
    outbox_table,
)

__all__ = [
    "RETRY",
    "TABLE_NAME",
    "AsyncOutbox",
    "AsyncOutboxQueue",
    "DjangoOutbox",
    "Outbox",
    "OutboxQueue",
    "OutboxRecord",
    "OutboxStats",
    "Relay",
    "RelayDurability",
    "RelayReport",
    "create_outbox_table",
    "outbox_ddl",
    "outbox_table",
]
