"""The workers page and its JSON twin: what aqless workers publish of themselves, other
clients' workers with what qless knows, and no clients that hold nothing and publish
nothing among the workers."""

from __future__ import annotations

import os
import socket

import httpx

import aqless
from aqless._worker import info as worker_info
from tests.support.clients import pop_one


async def test_workers_page_shows_records_and_sets_idle_clients_apart(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    await client.queues["q"].put("app.A", {})
    await pop_one(client.queues["q"], worker="ruby-worker")
    await client.queues["empty"].pop_many(1, worker="only-popped")
    counters = aqless.WorkerCounters(completed=12)
    publisher = worker_info.InfoPublisher(client, "aq-<1>", ["q"], 8, counters)
    await publisher.publish()

    listing = (await app_client.get("/api/workers")).json()
    assert [worker["name"] for worker in listing["workers"]] == ["aq-<1>", "ruby-worker"]
    assert listing["others"] == ["only-popped"]
    record = listing["workers"][0]["info"]
    assert (record["host"], record["pid"], record["concurrency"]) == (
        socket.gethostname(),
        os.getpid(),
        8,
    )
    assert record["completed"] == 12
    assert listing["workers"][1]["info"] is None

    page = (await app_client.get("/workers")).text
    assert "aq-&lt;1&gt;" in page
    assert "aq-<1>" not in page
    assert f'<td class="num pid">{os.getpid()}</td>' in page
    assert "no record: a worker of another qless client" in page
    overview = (await app_client.get("/api/overview")).json()
    assert [worker["name"] for worker in overview["workers"]] == ["aq-<1>", "ruby-worker"]

    one = (await app_client.get("/api/workers/aq-<1>")).json()
    assert one["info"]["queues"] == ["q"]
    assert "Last seen" in (await app_client.get("/workers/aq-<1>")).text

    await publisher.withdraw()
    after = (await app_client.get("/api/workers")).json()
    assert [worker["name"] for worker in after["workers"]] == ["ruby-worker"]
