"""The acceptance test of the outbox: an application SIGKILLed at random points (between
its commits and the relay, in the middle of a relay's round) loses no committed put and
doubles none: every one of 1,000 committed puts becomes exactly one job, and 500
rolled-back transactions make none."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
import sqlalchemy as sa

import aqless
from aqless.outbox import Relay, create_outbox_table
from tests.outbox.conftest import fresh_postgres_database

pytest_plugins = ["tests.support.client_fixtures"]

APP = Path(__file__).with_name("killed_app.py")
ROOT = Path(__file__).resolve().parents[2]
TOTAL = 1000
KILLS = 6  # then the application runs to the end


@pytest.fixture
def app_database(postgres_cluster: str) -> Iterator[str]:
    """A new PostgreSQL database with the outbox and the application's orders."""
    url, admin = fresh_postgres_database(postgres_cluster)
    engine = sa.create_engine(url)
    create_outbox_table(engine)
    with engine.begin() as connection:
        connection.exec_driver_sql("CREATE TABLE orders (n INTEGER PRIMARY KEY, jid TEXT)")
    engine.dispose()
    yield url
    with admin.connect() as connection:
        connection.exec_driver_sql(f"DROP DATABASE {url.rsplit('/', 1)[1]} WITH (FORCE)")
    admin.dispose()


def run_app(database: str, server: str, kill_after: float | None) -> int:
    """Start the application; SIGKILL it `kill_after` seconds after it is ready (None: let
    it finish). Returns its exit status."""
    process = subprocess.Popen(
        [sys.executable, str(APP), database, server, str(TOTAL)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    assert process.stdout.readline() == "ready\n", process.communicate(timeout=30)[1]
    if kill_after is not None:
        try:
            process.wait(kill_after)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGKILL)
    _, errors = process.communicate(timeout=60)
    assert process.returncode in (0, -signal.SIGKILL), errors
    return process.returncode


@pytest.mark.deployments("valkey9", reason="the application's database and its kills are the test")
@pytest.mark.timeout(180)
async def test_every_committed_put_becomes_one_job_through_sigkills(
    server_url: str, client: aqless.Client, app_database: str
) -> None:
    chance = random.Random(os.environ.get("PYTEST_XDIST_WORKER", "") + "outbox")  # noqa: S311
    killed = 0
    for _ in range(KILLS):
        status = await anyio.to_thread.run_sync(
            run_app, app_database, server_url, chance.uniform(0.05, 0.6)
        )
        if status == 0:
            break
        killed += 1
    else:
        assert await anyio.to_thread.run_sync(run_app, app_database, server_url, None) == 0
    assert killed >= 2

    # then relays (two at once) move whatever the killed relays left
    async def relay() -> None:
        async with Relay(client, app_database, batch=100, durable=False) as relay:
            await relay.drain()

    async with anyio.create_task_group() as relays:
        for _ in range(2):
            relays.start_soon(relay)

    engine = sa.create_engine(app_database)
    with engine.connect() as connection:
        committed: dict[str, int] = dict(
            connection.execute(sa.text("SELECT jid, n FROM orders")).all()
        )
        left = connection.execute(sa.text("SELECT count(*) FROM aqless_outbox")).scalar()
    engine.dispose()
    assert sorted(committed.values()) == list(range(TOTAL))
    assert left == 0
    jobs = await client.queues["orders"].peek(3 * TOTAL)
    assert len(jobs) == TOTAL  # exactly one job per committed put
    assert {job.jid: job.data["order"] for job in jobs} == committed
    assert not [job for job in jobs if job.data.get("rolled_back")]
