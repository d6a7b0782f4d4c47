"""The throttles and recurring pages at scale: no SCAN of the keyspace, the templates read in
bulk (their work bounded by what they show, not by the keys the server holds)."""

from __future__ import annotations

import httpx

import aqless
from aqless.web import create_app
from tests.support.clients import Counted
from tests.support.commandstats import calls

pytest_plugins = ["tests.support.client_fixtures"]


async def test_the_throttles_page_lists_every_throttle_without_a_scan(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    await client.throttles["smtp"].set(3)
    await client.queues["emails"].put("app.Send", {}, throttles=["smtp"])
    # another client's own throttle of a queue, with no index entry
    await client.redis.hset("ql:th:ql:q:emails", mapping={"id": "ql:q:emails", "maximum": 1})
    before = await calls(client, "scan")
    document = (await app_client.get("/api/throttles")).json()
    page = (await app_client.get("/throttles")).text
    assert await calls(client, "scan") == before
    assert [(t["id"], t["maximum"]) for t in document["throttles"]] == [
        ("ql:q:emails", 1),
        ("smtp", 3),
    ]
    assert "queue emails" in page
    assert "smtp" in page
    assert "aqless throttle reindex" in page  # how other clients' named throttles show


async def test_the_recurring_page_reads_the_templates_in_bulk(counted: Counted) -> None:
    client = counted.client
    for n in range(40):
        await client.queues["reports"].recur("app.Report", {"n": n}, interval=60, jid=f"r{n}")
    transport = httpx.ASGITransport(app=create_app(client))
    async with httpx.AsyncClient(transport=transport, base_url="http://dash") as http:
        before = counted.round_trips.count
        document = (await http.get("/api/recurring")).json()
        assert counted.round_trips.count - before == 3  # names, ids, templates
        page = await http.get("/api/queues/reports", params={"state": "recurring", "page": 2})
    by_name = sorted(f"r{n}" for n in range(40))  # same next spawn: by id
    assert [job["jid"] for job in document["jobs"]] == by_name
    assert [job["jid"] for job in page.json()["jobs"]] == by_name[25:]
