"""The outbox table: one row per put waiting for the relay. The same table serves the
SQLAlchemy writers, the Django writer and the relay."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    Connection,
    Double,
    Engine,
    Index,
    Integer,
    MetaData,
    Table,
    Text,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Dialect
from sqlalchemy.schema import CreateIndex, CreateTable

TABLE_NAME = "aqless_outbox"
"""The outbox table's name in the application's database."""

metadata = MetaData()

outbox_table = Table(
    TABLE_NAME,
    metadata,
    # SQLite makes only an INTEGER PRIMARY KEY its rowid (and so counts it up by itself)
    Column("id", BigInteger().with_variant(Integer(), "sqlite"), primary_key=True),
    Column("jid", Text, nullable=False),
    Column("queue", Text, nullable=False),
    Column("klass", Text, nullable=False),
    Column("data", Text, nullable=False),
    Column("options", Text, nullable=False),
    Column("created_at", Double, nullable=False),
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("next_attempt_at", Double, nullable=False),
    Column("last_error", Text),
    Index(f"{TABLE_NAME}_due", "next_attempt_at"),
)
"""The outbox table as SQLAlchemy describes it: add `metadata` (or this table) to your
migrations, or call `create_outbox_table`."""


def create_outbox_table(bind: Engine | Connection) -> None:
    """Create the outbox table (and its index) in `bind`'s database unless it is there.

    Examples:
        ```python
        from aqless.outbox import create_outbox_table

        create_outbox_table(create_engine("postgresql+psycopg://app@db/app"))
        ```
    """
    metadata.create_all(bind, tables=[outbox_table], checkfirst=True)


def outbox_ddl(dialect: str) -> list[str]:
    """The statements that create the outbox table on `dialect` (``postgresql`` or
    ``sqlite``), for migrations written by hand (Django's ``RunSQL``).

    Raises:
        ValueError: another dialect.

    Examples:
        ```python
        operations = [migrations.RunSQL(outbox_ddl("postgresql"))]
        ```
    """
    if dialect == "postgresql":
        compiler: Dialect = postgresql.psycopg.dialect()  # type: ignore[no-untyped-call]
    elif dialect == "sqlite":
        compiler = sqlite.pysqlite.dialect()
    else:
        raise ValueError(f"no outbox DDL for {dialect!r}: postgresql or sqlite")
    table = str(CreateTable(outbox_table, if_not_exists=True).compile(dialect=compiler))
    indexes = [
        str(CreateIndex(index, if_not_exists=True).compile(dialect=compiler))
        for index in sorted(outbox_table.indexes, key=lambda index: str(index.name))
    ]
    return [table.strip(), *indexes]
