"""Fixtures of the outbox tests: an application database (SQLite in a file, and a real
PostgreSQL cluster of the session's own) holding the outbox table."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from aqless.outbox import create_outbox_table
from tests.support import postgres

DATABASES = ("sqlite", "postgresql")


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[str]:
    """The URL of a throwaway PostgreSQL cluster's ``postgres`` database."""
    reason = postgres.missing()
    if reason is not None:
        if postgres.REQUIRE_POSTGRES:
            pytest.fail(f"AQLESS_REQUIRE_POSTGRES=1 but {reason}")
        pytest.skip(reason)
    with postgres.cluster() as url:
        yield url


def fresh_postgres_database(cluster: str) -> tuple[str, sa.Engine]:
    """A new empty database on `cluster`: its URL, and an engine on ``postgres`` to drop it."""
    name = f"app_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(cluster, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.exec_driver_sql(f"CREATE DATABASE {name}")
    return cluster.rsplit("/", 1)[0] + f"/{name}", admin


@pytest.fixture(params=DATABASES)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A blocking SQLAlchemy URL of an empty application database with the outbox table:
    a SQLite file, or a new database on the session's PostgreSQL."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'app.db'}"
        admin = None
    else:
        url, admin = fresh_postgres_database(request.getfixturevalue("postgres_cluster"))
    engine = sa.create_engine(url)
    create_outbox_table(engine)
    engine.dispose()
    yield url
    if admin is not None:
        with admin.connect() as connection:
            name = url.rsplit("/", 1)[1]
            connection.exec_driver_sql(f"DROP DATABASE {name} WITH (FORCE)")
        admin.dispose()


@pytest.fixture
def engine(database_url: str) -> Iterator[sa.Engine]:
    """A blocking engine on `database_url`."""
    made = sa.create_engine(database_url)
    yield made
    made.dispose()


def async_url(url: str) -> str:
    """The asyncio driver's URL of the same database (aiosqlite, psycopg's async mode)."""
    return url.replace("sqlite://", "sqlite+aiosqlite://", 1)


def rows(engine: sa.Engine) -> list[sa.Row[tuple[object, ...]]]:
    """Every row of the outbox, oldest first."""
    with engine.connect() as connection:
        return list(connection.execute(sa.text("SELECT * FROM aqless_outbox ORDER BY id")))
