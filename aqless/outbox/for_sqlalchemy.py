"""The outbox's writers for SQLAlchemy: blocking (`Session`, `Connection`) and asyncio
(`AsyncSession`, `AsyncConnection`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from sqlalchemy import insert

from aqless.codecs import PayloadCodec
from aqless.outbox.queues import AsyncOutboxQueue, OutboxQueue, Queues, wall_clock, writer_codec
from aqless.outbox.record import OutboxRecord
from aqless.outbox.table import outbox_table

if TYPE_CHECKING:  # only named: a blocking or Django application imports no asyncio part
    from sqlalchemy import Connection
    from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession
    from sqlalchemy.orm import Session


class Outbox:
    """Puts written in the transaction of a SQLAlchemy `Session` or `Connection`:
    ``Outbox(session).queues["emails"].put(SendEmail, {...})``. The rows become jobs once
    the transaction commits and a `Relay` moves them; a rollback drops them with the rest.

    Args:
        bind: the session or connection whose transaction the puts join.
        clock: the Unix time now (a put's `at`/`delay` is made a time from it); default
            the wall clock.
        codec: what the job's data is stored through (aqless.codecs), in the outbox table
            and then on the server, as a client's puts store it (default: the one
            ``AQLESS_KEYS`` and ``AQLESS_BLOB_DIR`` describe, if any).

    Examples:
        ```python
        from aqless.outbox import Outbox

        with Session(engine) as session, session.begin():
            session.add(User(id=42, email=email))
            Outbox(session).queues["emails"].put("app.jobs.welcome", {"user": 42})
        ```
    """

    def __init__(
        self,
        bind: Session | Connection,
        *,
        clock: Callable[[], float] = wall_clock,
        codec: PayloadCodec | None = None,
    ):
        self.bind = bind
        codec = writer_codec(codec)
        self.queues: Queues[OutboxQueue] = Queues(
            lambda name: OutboxQueue(name, self._insert, clock, codec)
        )

    def _insert(self, records: list[OutboxRecord]) -> None:
        self.bind.execute(insert(outbox_table), [record.row() for record in records])


class AsyncOutbox:
    """`Outbox` for asyncio: puts written in the transaction of an `AsyncSession` or
    `AsyncConnection`: ``await AsyncOutbox(session).queues["emails"].put(...)``.

    Args:
        bind: the session or connection whose transaction the puts join.
        clock: the Unix time now (default: the wall clock).
        codec: what the job's data is stored through (aqless.codecs), in the outbox table
            and then on the server, as a client's puts store it (default: the one
            ``AQLESS_KEYS`` and ``AQLESS_BLOB_DIR`` describe, if any).

    Examples:
        ```python
        from aqless.outbox import AsyncOutbox

        async with AsyncSession(engine) as session, session.begin():
            session.add(User(id=42, email=email))
            await AsyncOutbox(session).queues["emails"].put("app.jobs.welcome", {"user": 42})
        ```
    """

    def __init__(
        self,
        bind: AsyncSession | AsyncConnection,
        *,
        clock: Callable[[], float] = wall_clock,
        codec: PayloadCodec | None = None,
    ):
        self.bind = bind
        codec = writer_codec(codec)
        self.queues: Queues[AsyncOutboxQueue] = Queues(
            lambda name: AsyncOutboxQueue(name, self._insert, clock, codec)
        )

    async def _insert(self, records: list[OutboxRecord]) -> None:
        await self.bind.execute(insert(outbox_table), [record.row() for record in records])
