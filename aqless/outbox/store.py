"""The relay's side of the outbox table: claim due rows so that no other relay takes them
while this one puts them, then delete them or put them off; and count what waits.

A claim is a transaction that holds its rows: on PostgreSQL (and other servers with row
locks) ``SELECT ... FOR UPDATE SKIP LOCKED``, so relays at once take different rows; on
SQLite, which has one writer at a time, the claim's first statement is a write, so a
second relay waits for the first to commit before it reads."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields

from sqlalchemy import Connection, Engine, bindparam, create_engine, delete, func, select, update

from aqless.errors import needs_extra
from aqless.outbox.table import TABLE_NAME, outbox_table

_COLUMNS = outbox_table.c


def open_engine(database: str) -> Engine:
    """The engine of the application's database URL; a driver that is not installed is
    the ConfigurationError naming the extra (psycopg for ``postgresql+psycopg://``)."""
    with needs_extra("outbox", f"the outbox's database ({database.partition(':')[0]})"):
        return create_engine(database)


@dataclass(frozen=True, slots=True)
class OutboxRow:
    """A claimed row: the put it holds and how often it was tried."""

    id: int
    jid: str
    queue: str
    klass: str
    data: str
    options: str
    attempts: int


@dataclass(frozen=True, slots=True)
class OutboxStats:
    """What waits in the outbox.

    Attributes:
        pending: rows not yet relayed (committed puts that are not jobs yet).
        retrying: those of them the server refused at least once (put off, with backoff).
        oldest_age: seconds since the oldest of them was written (0 when there is none):
            the relay's lag.
        last_error: the latest refusal of a retrying row, if any.

    Examples:
        ```python
        stats = await relay.stats()
        if stats.oldest_age > 60:
            print(f"outbox lag {stats.oldest_age:.0f} s: {stats.last_error}")
        ```
    """

    pending: int
    retrying: int
    oldest_age: float
    last_error: str | None


class Claim:
    """Rows claimed in an open transaction, until `claimed` ends: `delete` the relayed
    ones, `put_off` the refused ones."""

    def __init__(self, connection: Connection, rows: list[OutboxRow]) -> None:
        self.connection = connection
        self.rows = rows

    def delete(self, ids: Sequence[int]) -> None:
        """Delete the rows relayed."""
        if ids:
            self.connection.execute(delete(outbox_table).where(_COLUMNS.id.in_(list(ids))))

    def put_off(self, until: dict[int, float], error: str) -> None:
        """Count a refused attempt on each row of `until` and leave it until its time."""
        if not until:
            return
        statement = (
            update(outbox_table)
            .where(_COLUMNS.id == bindparam("row_id"))
            .values(
                attempts=_COLUMNS.attempts + 1,
                next_attempt_at=bindparam("when"),
                last_error=error,
            )
        )
        self.connection.execute(
            statement, [{"row_id": row_id, "when": when} for row_id, when in until.items()]
        )


class OutboxStore:
    """The outbox table of `engine`'s database, as the relay reads and writes it."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.single_writer = engine.dialect.name == "sqlite"

    @contextmanager
    def claimed(self, limit: int, now: float) -> Iterator[Claim]:
        """Up to `limit` rows due at `now`, oldest first, held until the block ends: its
        writes commit then (or roll back on an exception, leaving the rows as they were)."""
        with self.engine.connect() as connection, connection.begin():
            if self.single_writer:  # take the write lock before reading
                connection.exec_driver_sql(
                    f"UPDATE {TABLE_NAME} SET attempts = attempts WHERE 0"  # noqa: S608
                )
            query = (
                select(*[_COLUMNS[field.name] for field in fields(OutboxRow)])
                .where(_COLUMNS.next_attempt_at <= now)
                .order_by(_COLUMNS.id)
                .limit(limit)
            )
            if not self.single_writer:
                query = query.with_for_update(skip_locked=True)
            rows = [OutboxRow(*row) for row in connection.execute(query)]
            yield Claim(connection, rows)

    def stats(self, now: float) -> OutboxStats:
        """How many rows wait, how many were refused, and the age of the oldest."""
        with self.engine.connect() as connection:
            pending, retrying, oldest = connection.execute(
                select(
                    func.count(),
                    func.count().filter(_COLUMNS.attempts > 0),
                    func.min(_COLUMNS.created_at),
                ).select_from(outbox_table)
            ).one()
            last_error = connection.execute(
                select(_COLUMNS.last_error)
                .where(_COLUMNS.last_error.is_not(None))
                .order_by(_COLUMNS.next_attempt_at.desc())
                .limit(1)
            ).scalar()
        age = 0.0 if oldest is None else max(0.0, now - float(oldest))
        return OutboxStats(int(pending), int(retrying), age, last_error)
