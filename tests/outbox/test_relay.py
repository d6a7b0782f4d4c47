"""The relay: committed rows become jobs under their jids, once each, then leave the
outbox; a refused row stays, put off, until the server takes it; relays at once never put
one row twice."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator

import anyio
import pytest
import redis
import sqlalchemy as sa
from sqlalchemy.orm import Session

import aqless
from aqless import JobState
from aqless.outbox import RETRY, Outbox, OutboxStats, Relay, outbox_table
from aqless.outbox.store import OutboxStore
from tests.faults.harness import OwnServer
from tests.outbox.conftest import rows
from tests.support.deployments import Deployment

pytest_plugins = ["tests.support.client_fixtures"]

ONE_SERVER = pytest.mark.deployments("valkey9", reason="the relay's database side is the test")


def put_committed(
    engine: sa.Engine, count: int, queue: str = "emails", **options: object
) -> list[str]:
    with Session(engine) as session, session.begin():
        outbox = Outbox(session).queues[queue]
        return [outbox.put("app.SendEmail", {"n": n}, **options) for n in range(count)]  # type: ignore[arg-type]


async def test_committed_rows_become_jobs_under_their_jids(
    client: aqless.Client, engine: sa.Engine
) -> None:
    with Session(engine) as session, session.begin():
        queue = Outbox(session).queues["emails"]
        first = queue.put("app.SendEmail", {"to": "ann"}, priority=5, tags=["mail"], retries=1)
        later = queue.put("app.SendEmail", {"to": "bob"}, delay=3600)
        other = Outbox(session).queues["reports"].put("app.Report", None)
    relay = Relay(client, engine, durable=False)
    assert (await relay.stats()).pending == 3
    assert await relay.drain() == 3
    assert rows(engine) == []
    assert await relay.stats() == OutboxStats(0, 0, 0.0, None)
    job = await client.jobs.get(first)
    assert isinstance(job, aqless.Job)
    assert (job.klass_name, job.queue_name, job.data) == ("app.SendEmail", "emails", {"to": "ann"})
    assert (job.priority, job.tags, job.original_retries) == (5, ("mail",), 1)
    scheduled = await client.jobs.get(later)
    assert isinstance(scheduled, aqless.Job)
    assert scheduled.state == JobState.SCHEDULED
    report = await client.jobs.get(other)
    assert report is not None
    assert report.data == {}


@ONE_SERVER
async def test_a_rolled_back_transaction_puts_nothing(
    client: aqless.Client, engine: sa.Engine
) -> None:
    with Session(engine) as session:
        session.begin()
        jid = Outbox(session).queues["emails"].put("app.SendEmail", {"n": 1})
        session.rollback()
    assert await Relay(client, engine, durable=False).drain() == 0
    assert await client.jobs.get(jid) is None
    assert await client.queues["emails"].length() == 0


@ONE_SERVER
async def test_a_row_relayed_twice_makes_one_job(client: aqless.Client, engine: sa.Engine) -> None:
    """A relay that dies between its put and its delete leaves the row: the next relay
    puts it again, and the row's own dedup id drops that put, even after the job ran."""
    (jid,) = put_committed(engine, 1)
    (row,) = rows(engine)
    relay = Relay(client, engine, durable=False)
    assert await relay.drain() == 1
    job = await client.queues["emails"].pop()
    assert job is not None
    assert job.jid == jid
    await job.complete()
    with engine.begin() as connection:  # the row back, as if its delete never committed
        connection.execute(sa.insert(outbox_table), [row._asdict()])
    assert await relay.drain() == 1
    assert rows(engine) == []
    done = await client.jobs.get(jid)
    assert isinstance(done, aqless.Job)
    assert done.state == JobState.COMPLETE
    assert await client.queues["emails"].length() == 0


@ONE_SERVER
async def test_a_puts_own_dedup_is_kept(client: aqless.Client, engine: sa.Engine) -> None:
    first, second = put_committed(engine, 2, dedup="welcome-ann")
    assert await Relay(client, engine, durable=False).drain() == 2
    assert await client.queues["emails"].length() == 1
    assert await client.jobs.get(first) is not None
    assert await client.jobs.get(second) is None


@ONE_SERVER
async def test_relays_at_once_put_each_row_once(deployment: Deployment, engine: sa.Engine) -> None:
    jids = put_committed(engine, 400)
    relayed: list[int] = []
    async with deployment.open_client() as client:
        await deployment.flush()

        async def relay() -> None:
            relayed.append(await Relay(client, engine, batch=25, durable=False).drain())

        async with anyio.create_task_group() as relays:
            for _ in range(4):
                relays.start_soon(relay)
        # a row put by two relays would be counted by both
        assert sum(relayed) == 400
        waiting = await client.queues["emails"].peek(500)
        assert sorted(job.jid for job in waiting) == sorted(jids)


@pytest.fixture
def claimed_elsewhere(engine: sa.Engine) -> Iterator[threading.Event]:
    """8 rows, 5 of them claimed in another thread until the event is set."""
    put_committed(engine, 8)
    release, held = threading.Event(), threading.Event()

    def hold() -> None:
        with OutboxStore(engine).claimed(5, now=float("inf")) as claim:
            assert len(claim.rows) == 5
            held.set()
            release.wait(30)

    thread = threading.Thread(target=hold)
    thread.start()
    assert held.wait(30)
    try:
        yield release
    finally:
        release.set()
        thread.join()


def test_a_claim_skips_rows_another_claim_holds(
    engine: sa.Engine, claimed_elsewhere: threading.Event
) -> None:
    store = OutboxStore(engine)
    if not store.single_writer:  # PostgreSQL: the rows held are skipped, not waited for
        with store.claimed(10, now=float("inf")) as claim:
            assert [row.id for row in claim.rows] == [6, 7, 8]
        return
    # SQLite: one writer at a time, so a second claim waits until the first ends
    got: list[list[int]] = []
    waiting = threading.Thread(target=lambda: got.append(_claim_ids(store)), name="second claim")
    waiting.start()
    waiting.join(0.5)
    assert got == []
    claimed_elsewhere.set()
    waiting.join(30)
    assert got == [[1, 2, 3, 4, 5, 6, 7, 8]]


def _claim_ids(store: OutboxStore) -> list[int]:
    with store.claimed(10, now=float("inf")) as claim:
        return [row.id for row in claim.rows]


@ONE_SERVER
async def test_a_refused_row_stays_until_the_server_takes_it(
    client: aqless.Client, engine: sa.Engine, server_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A server out of memory refuses the puts: the rows stay, counted and put off; once
    the server has room again they land."""
    put_committed(engine, 3)
    now = [time.time() + 1]
    relay = Relay(client, engine, durable=False, clock=lambda: now[0])
    with redis.Redis.from_url(server_url) as admin:
        used = int(admin.info("memory")["used_memory"])
        admin.config_set("maxmemory", max(1, used // 2))
        try:
            report = await relay.relay_once()
        finally:
            admin.config_set("maxmemory", 0)
    assert (report.relayed, report.refused) == (0, 3)
    assert "OOM" in report.errors[0] or "memory" in report.errors[0].lower()
    assert "stay in the outbox" in caplog.text
    stats = await relay.stats()
    assert (stats.pending, stats.retrying) == (3, 3)
    assert stats.last_error is not None
    assert all(row.attempts == 1 for row in rows(engine))
    waits = [row.next_attempt_at - now[0] for row in rows(engine)]
    assert all(RETRY.first / 2 <= wait <= RETRY.first for wait in waits)
    assert (await relay.relay_once()).relayed == 0  # not due yet
    now[0] += RETRY.first
    assert await relay.drain() == 3
    assert await client.queues["emails"].length() == 3


@ONE_SERVER
async def test_a_lost_server_leaves_the_rows(engine: sa.Engine, tmp_path: object) -> None:
    put_committed(engine, 2)
    async with aqless.Client("redis://127.0.0.1:1", socket_connect_timeout=1) as away:
        report = await Relay(away, engine, durable=False).relay_once()
    assert (report.relayed, report.refused) == (0, 2)
    assert len(rows(engine)) == 2


async def test_auto_durability_falls_back_to_plain_puts_with_a_warning(
    client: aqless.Client, engine: sa.Engine, caplog: pytest.LogCaptureFixture
) -> None:
    """The test servers run with the append-only file off (and Redis 7.0 has no WAITAOF):
    ``durable="auto"`` says so and relays plainly; ``durable=True`` keeps the rows."""
    put_committed(engine, 2)
    with caplog.at_level(logging.WARNING):
        insisting = await Relay(client, engine, durable=True).relay_once()
    assert (insisting.relayed, insisting.refused) == (0, 2)
    with engine.begin() as connection:
        connection.execute(sa.text("UPDATE aqless_outbox SET next_attempt_at = 0"))
    relay = Relay(client, engine)
    assert await relay.drain() == 2
    assert relay.durable is False
    assert "cannot confirm durable puts" in caplog.text
    assert await client.queues["emails"].length() == 2


@ONE_SERVER
async def test_durable_puts_where_the_append_only_file_is_on(
    engine: sa.Engine, caplog: pytest.LogCaptureFixture
) -> None:
    put_committed(engine, 3)
    server = OwnServer("everysec")
    server.start()
    try:
        async with aqless.Client(server.url) as durable_client:
            relay = Relay(durable_client, engine)
            assert await relay.drain() == 3
            assert relay.durable == "auto"
            assert await durable_client.queues["emails"].length() == 3
    finally:
        server.close()
    assert "cannot confirm" not in caplog.text


@ONE_SERVER
async def test_run_relays_rows_committed_while_it_runs(
    client: aqless.Client, engine: sa.Engine
) -> None:
    relay = Relay(client, engine, durable=False, interval=0.05)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(relay.run)
        (jid,) = put_committed(engine, 1)
        for _ in range(400):
            if await client.jobs.get(jid) is not None:
                break
            await anyio.sleep(0.05)
        tasks.cancel_scope.cancel()
    assert rows(engine) == []


def test_a_relay_refuses_an_empty_batch(engine: sa.Engine) -> None:
    with pytest.raises(aqless.ConfigurationError):
        Relay(None, engine, batch=0)  # type: ignore[arg-type]


def test_row_options_travel(engine: sa.Engine) -> None:
    put_committed(engine, 1, tags=["a"])
    assert json.loads(rows(engine)[0].options) == {"tags": ["a"]}
