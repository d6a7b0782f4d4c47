"""The outbox on the command line: ``aqless outbox status`` and ``relay``, and
``aqless-run --outbox-url``, which relays beside a worker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
import sqlalchemy as sa
from sqlalchemy.orm import Session

import aqless
from aqless.outbox import Outbox, create_outbox_table
from tests.support.cli import Cli

pytest_plugins = ["tests.support.client_fixtures"]

ROOT = Path(__file__).resolve().parents[2]
ONE_SERVER = pytest.mark.deployments("valkey9", reason="the commands add no server behaviour")


def put_committed(engine: sa.Engine, count: int) -> list[str]:
    with Session(engine) as session, session.begin():
        queue = Outbox(session).queues["emails"]
        return [queue.put("app.SendEmail", {"n": n}) for n in range(count)]


@ONE_SERVER
async def test_status_counts_what_waits_and_relay_drains_it(
    client: aqless.Client, engine: sa.Engine, database_url: str, server_url: str
) -> None:
    run_cli = Cli(server_url)
    jids = put_committed(engine, 2)
    waiting = (await run_cli("--json", "outbox", "status", "--database", database_url)).json()
    assert waiting["pending"] == 2
    assert waiting["retrying"] == 0
    assert waiting["oldest_age"] >= 0
    shown = await run_cli("outbox", "status", "--database", database_url)
    assert "pending" in shown.stdout
    relayed = await run_cli(
        "--json", "outbox", "relay", "--drain", "--durable", "no", "--database", database_url
    )
    assert relayed.json() == {"relayed": 2}
    assert [await client.jobs.get(jid) is not None for jid in jids] == [True, True]
    after = (await run_cli("--json", "outbox", "status", "--database", database_url)).json()
    assert after == {"pending": 0, "retrying": 0, "oldest_age": 0.0, "last_error": None}


async def test_status_needs_a_database() -> None:
    outcome = await Cli("redis://127.0.0.1:1")("outbox", "status")
    assert outcome.code == 2
    assert "--database" in outcome.stderr


@ONE_SERVER
async def test_the_worker_command_relays_beside_its_worker(
    client: aqless.Client, tmp_path: Path, server_url: str
) -> None:
    database_url = f"sqlite:///{tmp_path / 'app.db'}"
    engine = sa.create_engine(database_url)
    create_outbox_table(engine)
    jids = put_committed(engine, 3)
    worker = subprocess.Popen(  # noqa: ASYNC220 - a process the test stops by signal
        [sys.executable, "-m", "aqless.run", "--url", server_url, "--outbox-url", database_url,
         "idle"],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        for _ in range(300):
            if await client.queues["emails"].length() == 3:
                break
            await anyio.sleep(0.05)
    finally:
        worker.send_signal(signal.SIGTERM)
        _, errors = worker.communicate(timeout=30)
    assert worker.returncode == 0, errors
    assert [await client.jobs.get(jid) is not None for jid in jids] == [True] * 3
    with engine.connect() as connection:
        assert connection.execute(sa.text("SELECT count(*) FROM aqless_outbox")).scalar() == 0
    engine.dispose()


def worker_check(
    server_url: str, database_url: str, mode: str = "--check"
) -> subprocess.CompletedProcess[str]:
    """``aqless-run --check`` (or another `mode`) with ``--outbox-url``."""
    return subprocess.run(
        [sys.executable, "-m", "aqless.run", "--url", server_url, "--outbox-url", database_url,
         mode, "idle"],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )  # fmt: skip


@ONE_SERVER
def test_the_worker_check_reads_the_outbox_as_the_run_will(tmp_path: Path, server_url: str) -> None:
    database_url = f"sqlite:///{tmp_path / 'app.db'}"
    engine = sa.create_engine(database_url)
    create_outbox_table(engine)
    put_committed(engine, 2)
    engine.dispose()
    checked = worker_check(server_url, database_url)
    assert checked.returncode == 0, checked.stderr
    assert f"outbox      {database_url}  (2 puts waiting)" in checked.stdout


@ONE_SERVER
@pytest.mark.parametrize(
    ("database_url", "says"),
    [
        # a driver that is not installed: the run could not start its relay
        ("mysql+pymysql://app:secret@db/app", "needs the 'outbox' extra"),
        # a database without the outbox table: the relay could never claim a row
        ("sqlite://", "check failed: the outbox database sqlite://: "),
    ],
)
def test_the_worker_check_fails_for_an_outbox_the_run_cannot_use(
    server_url: str, database_url: str, says: str
) -> None:
    checked = worker_check(server_url, database_url)
    assert checked.returncode == 2
    assert says in checked.stderr
    assert "secret" not in checked.stderr


@ONE_SERVER
@pytest.mark.parametrize("mode", ["--processes=2", "--max-jobs=10"])
def test_a_supervisor_refuses_an_outbox_driver_that_is_missing_before_starting_workers(
    server_url: str, mode: str
) -> None:
    started = worker_check(server_url, "mysql+pymysql://app@db/app", mode)
    assert started.returncode == 2
    assert "needs the 'outbox' extra" in started.stderr
    assert started.stderr.count("needs the 'outbox' extra") == 1  # said once, by no worker
