"""aqless workers: what aqless workers publish of themselves, and which clients count as
workers."""

from __future__ import annotations

import os
import socket

import pytest

import aqless
from aqless._worker import info as worker_info
from tests.support.cli import Cli
from tests.support.clients import pop_one

pytest_plugins = ["tests.support.client_fixtures"]


async def test_workers_show_their_record_and_leave_out_clients_holding_nothing(
    client: aqless.Client, run_cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    await client.queues["q"].put("app.A", {})
    await pop_one(client.queues["q"], worker="ruby-worker")  # another client's worker
    await client.queues["empty"].pop_many(1, worker="only-popped")
    publisher = worker_info.InfoPublisher(
        client, "aq-1", ["q", "mail-*"], 4, aqless.WorkerCounters()
    )
    await publisher.publish()

    listing = (await run_cli("--json", "workers")).json()
    assert [worker["name"] for worker in listing] == ["aq-1", "ruby-worker"]
    aq, ruby = listing
    assert ruby["info"] is None
    assert ruby["jobs"] == 1
    assert aq["info"]["host"] == socket.gethostname()
    assert aq["info"]["pid"] == os.getpid()
    assert aq["info"]["queues"] == ["q", "mail-*"]
    assert aq["info"]["concurrency"] == 4
    assert aq["jobs"] == 0
    every = (await run_cli("--json", "workers", "--all")).json()
    assert [worker["name"] for worker in every] == ["aq-1", "ruby-worker", "only-popped"]

    text = (await run_cli("workers")).stdout
    row = next(line.split() for line in text.splitlines() if line.strip().startswith("aq-1"))
    assert row[1:4] == [socket.gethostname(), str(os.getpid()), "q,"]
    assert "only-popped" not in text

    one = (await run_cli("--json", "workers", "aq-1")).json()
    assert one["info"]["concurrency"] == 4
    assert one["jobs"] == []
    assert "mail-*" in (await run_cli("workers", "aq-1")).stdout
