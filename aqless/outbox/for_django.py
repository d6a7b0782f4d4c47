"""The outbox's writer for Django: puts written through a database connection of Django's,
in its current transaction (``transaction.atomic()``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aqless.codecs import PayloadCodec
from aqless.outbox.queues import OutboxQueue, Queues, wall_clock, writer_codec
from aqless.outbox.record import OutboxRecord
from aqless.outbox.table import TABLE_NAME, outbox_ddl

_COLUMNS = ("jid", "queue", "klass", "data", "options", "created_at", "attempts", "next_attempt_at")
_INSERT = (
    f"INSERT INTO {TABLE_NAME} ({', '.join(_COLUMNS)}) "  # noqa: S608 (no value is formatted in)
    f"VALUES ({', '.join(['%s'] * len(_COLUMNS))})"
)


class DjangoOutbox:
    """Puts written in the transaction of Django's connection `using`:
    ``DjangoOutbox().queues["emails"].put(SendEmail, {...})`` inside
    ``transaction.atomic()``. The rows become jobs once the transaction commits and a
    `Relay` (on the same database, by URL) moves them; a rollback drops them.

    Args:
        using: the alias of the database in ``DATABASES`` (default ``"default"``).
        clock: the Unix time now (default: the wall clock).
        codec: what the job's data is stored through (aqless.codecs), in the outbox table
            and then on the server, as a client's puts store it (default: the one
            ``AQLESS_KEYS`` and ``AQLESS_BLOB_DIR`` describe, if any).

    Examples:
        ```python
        from django.db import transaction
        from aqless.outbox import DjangoOutbox

        with transaction.atomic():
            user = User.objects.create(email=email)
            DjangoOutbox().queues["emails"].put("app.jobs.welcome", {"user": user.pk})
        ```
    """

    def __init__(
        self,
        using: str = "default",
        *,
        clock: Callable[[], float] = wall_clock,
        codec: PayloadCodec | None = None,
    ):
        self.using = using
        codec = writer_codec(codec)
        self.queues: Queues[OutboxQueue] = Queues(
            lambda name: OutboxQueue(name, self._insert, clock, codec)
        )

    def _connection(self) -> Any:
        from django.db import connections

        return connections[self.using]

    def _insert(self, records: list[OutboxRecord]) -> None:
        rows = [tuple(record.row()[column] for column in _COLUMNS) for record in records]
        with self._connection().cursor() as cursor:
            cursor.executemany(_INSERT, rows)

    def create_table(self) -> None:
        """Create the outbox table in this database unless it is there (or add
        `outbox_ddl`'s statements to a migration with ``RunSQL``).

        Raises:
            ValueError: the database is neither PostgreSQL nor SQLite.

        Examples:
            ```python
            DjangoOutbox().create_table()
            ```
        """
        connection = self._connection()
        with connection.cursor() as cursor:
            for statement in outbox_ddl(connection.vendor):
                cursor.execute(statement)
