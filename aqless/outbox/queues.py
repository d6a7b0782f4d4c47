"""The outbox's queues: ``outbox.queues["emails"].put(klass, data, **options)``, as a
client's, but the put is a row written in the application's transaction."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Generic, TypeVar, Unpack

from aqless import codecs
from aqless.codecs import PayloadCodec
from aqless.outbox.record import OutboxRecord, record_put
from aqless.puts import JobClass, PutOptions, PutRequest
from aqless.queue import checked_name

#: Writes records into the outbox table, in the transaction of the caller's session.
Insert = Callable[[list[OutboxRecord]], None]
#: The same, for an asyncio session or connection.
AsyncInsert = Callable[[list[OutboxRecord]], Awaitable[None]]

QueueKind = TypeVar("QueueKind")


class _Recorder:
    """What both kinds of queue share: the checks and encoding of `record_put`."""

    def __init__(
        self, name: str, clock: Callable[[], float], codec: PayloadCodec | None = None
    ) -> None:
        self.name = checked_name(name)
        self._clock = clock
        self._codec = codec

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"

    def _record(self, klass: JobClass, data: Any, options: PutOptions) -> OutboxRecord:
        return record_put(self.name, klass, data, options, clock=self._clock, codec=self._codec)

    def _records(self, requests: Iterable[PutRequest]) -> list[OutboxRecord]:
        return [self._record(r.klass, r.data, r.options()) for r in requests]


class OutboxQueue(_Recorder):
    """A queue whose puts go into the outbox, in the transaction of a blocking session (a
    SQLAlchemy `Session` or `Connection`, or Django's connection): ``outbox.queues[name]``.

    Examples:
        ```python
        emails = Outbox(session).queues["emails"]
        jid = emails.put("app.jobs.welcome", {"user": 42}, priority=5)
        ```
    """

    def __init__(
        self,
        name: str,
        insert: Insert,
        clock: Callable[[], float],
        codec: PayloadCodec | None = None,
    ) -> None:
        super().__init__(name, clock, codec)
        self._insert = insert

    def put(self, klass: JobClass, data: Any = None, **options: Unpack[PutOptions]) -> str:
        """Write the put into the outbox; returns the jid the relay will put the job under.
        Takes what `aqless.Queue.put` takes, and refuses what it would refuse, before
        anything is written.

        Raises:
            PayloadError: data that is not JSON.
            JobDataError: data that does not fit a typed handler.
            TypeError: an unknown option.
            InvalidArgumentError: an option out of range (an InvalidValueError naming it).

        Examples:
            ```python
            jid = Outbox(session).queues["emails"].put(SendEmail, {"to": "a@example.com"})
            ```
        """
        record = self._record(klass, data, options)
        self._insert([record])
        return record.jid

    def put_many(self, requests: Iterable[PutRequest]) -> list[str]:
        """Write many puts (each checked first, none written if one is refused); returns
        their jids.

        Raises:
            PayloadError, JobDataError, TypeError, InvalidArgumentError: as `put`, for the
                first request refused; nothing written.

        Examples:
            ```python
            jids = outbox.queues["emails"].put_many(
                [PutRequest(SendEmail, {"to": to}) for to in addresses]
            )
            ```
        """
        records = self._records(requests)
        if records:
            self._insert(records)
        return [record.jid for record in records]


class AsyncOutboxQueue(_Recorder):
    """A queue whose puts go into the outbox, in the transaction of an asyncio SQLAlchemy
    `AsyncSession` or `AsyncConnection`: ``outbox.queues[name]``.

    Examples:
        ```python
        jid = await AsyncOutbox(session).queues["emails"].put("app.jobs.welcome", {"user": 42})
        ```
    """

    def __init__(
        self,
        name: str,
        insert: AsyncInsert,
        clock: Callable[[], float],
        codec: PayloadCodec | None = None,
    ) -> None:
        super().__init__(name, clock, codec)
        self._insert = insert

    async def put(self, klass: JobClass, data: Any = None, **options: Unpack[PutOptions]) -> str:
        """As `OutboxQueue.put`: write the put into the outbox; returns its jid.

        Raises:
            PayloadError, JobDataError, TypeError, InvalidArgumentError: as
                `OutboxQueue.put`; nothing written.

        Examples:
            ```python
            jid = await outbox.queues["emails"].put(SendEmail, {"to": "a@example.com"})
            ```
        """
        record = self._record(klass, data, options)
        await self._insert([record])
        return record.jid

    async def put_many(self, requests: Iterable[PutRequest]) -> list[str]:
        """As `OutboxQueue.put_many`: write many puts; returns their jids.

        Raises:
            PayloadError, JobDataError, TypeError, InvalidArgumentError: as
                `OutboxQueue.put`, for the first request refused; nothing written.

        Examples:
            ```python
            jids = await outbox.queues["emails"].put_many(requests)
            ```
        """
        records = self._records(requests)
        if records:
            await self._insert(records)
        return [record.jid for record in records]


class Queues(Generic[QueueKind]):
    """``outbox.queues[name]``: the queue of that name (no I/O)."""

    def __init__(self, make: Callable[[str], QueueKind]) -> None:
        self._make = make

    def __getitem__(self, name: str) -> QueueKind:
        return self._make(name)


def writer_codec(codec: PayloadCodec | None) -> PayloadCodec | None:
    """A writer's codec: the one given, else the environment's (as a `Client`'s)."""
    return codec or codecs.from_environment()


def wall_clock() -> float:
    """The Unix time now (the writers' default clock)."""
    return time.time()
