"""The Django writer: puts in ``transaction.atomic()`` are rows of that transaction, which
the relay (on the same database, by URL) moves; a rolled-back block puts nothing. Django
runs in a process of its own (its settings are made once per process)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import aqless
from aqless.outbox import Relay
from tests.support.processes import run_python

pytest_plugins = ["tests.support.client_fixtures"]

ROOT = Path(__file__).resolve().parents[2]
WRITER = Path(__file__).with_name("django_writer.py")


@pytest.mark.deployments("valkey9", reason="the Django side is the test")
async def test_django_puts_commit_and_roll_back_with_their_transaction(
    client: aqless.Client, database_url: str
) -> None:
    result = run_python(str(WRITER), database_url, env={"PYTHONPATH": str(ROOT)})
    committed = json.loads(result.stdout)
    assert len(committed) == 2
    async with Relay(client, database_url, durable=False) as relay:
        assert (await relay.stats()).pending == 2
        assert await relay.drain() == 2
    jobs = await client.queues["emails"].peek(10)
    assert sorted(job.jid for job in jobs) == sorted(committed)
    assert sorted(job.priority for job in jobs) == [0, 3]
    assert all(not job.data.get("rolled_back") for job in jobs)
