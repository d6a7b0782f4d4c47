"""The outbox's writers: a put inside the application's transaction is one row of that
transaction, refused at the call when `Queue.put` would refuse it."""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.orm import Session

from aqless import Dedup, PutRequest
from aqless.codecs import KeyRing, PayloadCodec
from aqless.codecs.envelope import ENVELOPE_PREFIX
from aqless.errors import InvalidArgumentError, PayloadError
from aqless.outbox import AsyncOutbox, Outbox, outbox_ddl
from tests.outbox.conftest import async_url, rows

NOW = 1_700_000_000.0


class SendEmail:
    """A job class whose defaults the outbox applies at the call, as put does."""

    @staticmethod
    def default_job_options(data: Any) -> dict[str, Any]:
        return {"priority": 7, "tags": ["mail"], "delay": 30}


def test_a_committed_put_is_one_row_of_the_transaction(engine: sa.Engine) -> None:
    with Session(engine) as session, session.begin():
        jid = (
            Outbox(session, clock=lambda: NOW)
            .queues["emails"]
            .put("app.SendEmail", {"to": "ann@example.com"}, jid="order-1-mail", retries=2)
        )
    assert jid == "order-1-mail"
    (row,) = rows(engine)
    assert (row.jid, row.queue, row.klass) == ("order-1-mail", "emails", "app.SendEmail")
    assert json.loads(row.data) == {"to": "ann@example.com"}
    assert json.loads(row.options) == {"retries": 2}
    assert (row.created_at, row.next_attempt_at, row.attempts) == (NOW, NOW, 0)


def test_a_rolled_back_transaction_leaves_no_row(engine: sa.Engine) -> None:
    with Session(engine) as session:
        session.begin()
        Outbox(session).queues["emails"].put("app.SendEmail", {"n": 1})
        session.rollback()
    with engine.connect() as connection, connection.begin() as transaction:
        Outbox(connection).queues["emails"].put_many([PutRequest("app.SendEmail", {"n": 2})])
        transaction.rollback()
    assert rows(engine) == []


def test_each_put_chooses_its_own_jid_at_the_call(engine: sa.Engine) -> None:
    with engine.begin() as connection:
        queue = Outbox(connection).queues["emails"]
        jids = [queue.put("app.SendEmail", {"n": n}) for n in range(3)]
        jids += queue.put_many([PutRequest("app.SendEmail", {"n": 3})])
    assert len(set(jids)) == 4
    assert [row.jid for row in rows(engine)] == jids


def test_data_that_is_not_json_fails_at_the_call_inside_the_transaction(
    engine: sa.Engine,
) -> None:
    with engine.begin() as connection:
        queue = Outbox(connection).queues["emails"]
        with pytest.raises(PayloadError):
            queue.put("app.SendEmail", {"when": datetime.datetime.now(datetime.UTC)})
        with pytest.raises(PayloadError):  # none of a batch is written when one is refused
            queue.put_many([PutRequest("app.A", {"n": 1}), PutRequest("app.B", {1j})])
        with pytest.raises(InvalidArgumentError):
            queue.put("app.SendEmail", {}, priority=float("nan"))
        with pytest.raises(TypeError):
            queue.put("app.SendEmail", {}, colour="blue")  # type: ignore[call-arg]
        queue.put("app.SendEmail", {"n": 2})  # the transaction goes on
    assert [json.loads(row.data) for row in rows(engine)] == [{"n": 2}]


def test_options_are_kept_as_the_put_gave_them_with_the_class_defaults(
    engine: sa.Engine,
) -> None:
    with engine.begin() as connection:
        queue = Outbox(connection, clock=lambda: NOW).queues["emails"]
        queue.put(SendEmail, {"n": 1})
        queue.put(
            SendEmail,
            {"n": 2},
            priority=1,
            delay=0,
            depends=["a"],
            throttles=["t"],
            rate_limits=["r"],
            dedup=Dedup("mail-2", ttl=60),
        )
        queue.put("app.Later", {}, at=NOW + 100)
    defaulted, given, later = (json.loads(row.options) for row in rows(engine))
    assert defaulted == {"priority": 7, "tags": ["mail"], "at": NOW + 30}
    assert given == {
        "priority": 1,
        "tags": ["mail"],
        "depends": ["a"],
        "throttles": ["t"],
        "rate_limits": ["r"],
        "dedup": {"id": "mail-2", "ttl": 60, "debounce": False},
    }
    assert later == {"at": NOW + 100}
    assert rows(engine)[0].klass == f"{__name__}.SendEmail"


async def test_an_asyncio_session_writes_in_its_transaction(database_url: str) -> None:
    from sqlalchemy.ext.asyncio import AsyncSession

    engine = create_async_engine(async_url(database_url))
    try:
        async with AsyncSession(engine) as session, session.begin():
            jid = await AsyncOutbox(session).queues["emails"].put("app.SendEmail", {"n": 1})
        async with engine.connect() as connection:
            await connection.begin()
            await (
                AsyncOutbox(connection)
                .queues["emails"]
                .put_many([PutRequest("app.SendEmail", {"n": 2})])
            )
            await connection.rollback()
            with pytest.raises(PayloadError):
                await AsyncOutbox(connection).queues["emails"].put("app.SendEmail", {b"x"})
    finally:
        await engine.dispose()
    blocking = sa.create_engine(database_url)
    assert [row.jid for row in rows(blocking)] == [jid]
    blocking.dispose()


def test_the_ddl_is_there_for_both_databases() -> None:
    for dialect in ("postgresql", "sqlite"):
        table, index = outbox_ddl(dialect)
        assert table.startswith("CREATE TABLE IF NOT EXISTS aqless_outbox")
        assert "next_attempt_at" in index
    with pytest.raises(ValueError, match="no outbox DDL"):
        outbox_ddl("oracle")


def test_an_outbox_row_is_sealed_by_the_writer_s_codec(engine: sa.Engine) -> None:
    codec = PayloadCodec(keys=KeyRing({"k1": KeyRing.new_key()}))
    with Session(engine) as session, session.begin():
        Outbox(session, codec=codec).queues["emails"].put("app.Mail", {"card": "4111-1111"})
    (row,) = rows(engine)
    assert str(row.data).startswith(ENVELOPE_PREFIX)  # sealed in the table: so on the server
    assert "4111-1111" not in str(row.data)
    assert codec.decode(str(row.data)) == {"card": "4111-1111"}
