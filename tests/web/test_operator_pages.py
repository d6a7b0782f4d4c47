"""The throttles and recurring pages at scale: no SCAN of the keyspace, the templates read in
bulk (their work bounded by what they show, not by the keys the server holds)."""

from __future__ import annotations

import httpx

import aqless
from aqless import PutRequest
from aqless.ops import audit
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
        document = (await http.get("/api/recurring", params={"size": 50})).json()
        assert counted.round_trips.count - before == 3  # counts, ids, templates
        page = await http.get("/api/queues/reports", params={"state": "recurring", "page": 2})
    by_name = sorted(f"r{n}" for n in range(40))  # same next spawn: by id
    assert [job["jid"] for job in document["jobs"]] == by_name
    assert (document["total"], document["pages"]) == (40, 1)
    assert [job["jid"] for job in page.json()["jobs"]] == by_name[25:]


async def test_the_recurring_page_reads_one_page_whatever_the_templates_kept(
    counted: Counted,
) -> None:
    client = counted.client
    for name, many in (("a-reports", 30), ("b-reports", 200), ("c-reports", 30)):
        for n in range(many):
            await client.queues[name].recur("app.Report", {}, interval=60, jid=f"{name}-{n:03}")
    transport = httpx.ASGITransport(app=create_app(client))
    async with httpx.AsyncClient(transport=transport, base_url="http://dash") as http:
        before = counted.round_trips.count
        last = (await http.get("/api/recurring", params={"page": 11})).json()
        # the counts, then the last queue's ids and templates: the 230 before are skipped
        assert counted.round_trips.count - before == 3
        before = counted.round_trips.count
        across = (await http.get("/api/recurring", params={"page": 2})).json()
        assert counted.round_trips.count - before == 5  # the counts, two queues' reads
        html = (await http.get("/recurring", params={"page": 2})).text
    assert (last["total"], last["pages"], last["page"]) == (260, 11, 11)
    assert [job["jid"] for job in last["jobs"]] == [f"c-reports-{n:03}" for n in range(20, 30)]
    assert [job["jid"] for job in across["jobs"]] == [
        *(f"a-reports-{n:03}" for n in range(25, 30)),
        *(f"b-reports-{n:03}" for n in range(20)),
    ]
    assert "260 recurring jobs" in html
    assert 'href="/recurring?page=11"' in html


async def test_the_failed_page_samples_only_its_page_of_groups(counted: Counted) -> None:
    client = counted.client
    queue = client.queues["fails"]
    for n in range(60):
        jid = await queue.put("app.Job", {}, jid=f"f{n:02}")
        job = await queue.pop()
        assert job is not None
        assert job.jid == jid
        await job.fail(f"app.Error{n:02}", "boom")
    transport = httpx.ASGITransport(app=create_app(client))
    async with httpx.AsyncClient(transport=transport, base_url="http://dash") as http:
        before = counted.round_trips.count
        last = (await http.get("/api/failed", params={"page": 3})).json()
        read_last = counted.round_trips.count - before
        before = counted.round_trips.count
        first = (await http.get("/api/failed", params={"size": 50})).json()
        read_first = counted.round_trips.count - before
        html = (await http.get("/failed", params={"page": 2})).text
    # the groups' counts, then each group on the page: its newest jobs' ids and the jobs
    assert read_last == 1 + 2 * 10
    assert read_first == 1 + 2 * 50
    assert [g["group"] for g in last["groups"]] == [f"app.Error{n:02}" for n in range(50, 60)]
    assert (last["total"], last["group_total"], last["pages"]) == (60, 60, 3)
    assert len(first["groups"]) == 50
    assert "60 failure groups" in html
    assert "app.Error49" in html
    assert "app.Error00" not in html


async def test_the_completed_audit_and_batches_pages_are_numbered_with_totals(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    queue = client.queues["finished"]
    for n in range(60):
        await queue.put("app.Job", {}, jid=f"done{n:02}")
        job = await queue.pop()
        assert job is not None
        await job.complete()
    for n in range(55):
        await audit.record(client, audit.entry("ops@host", "cli", f"action{n:02}"))
    for n in range(30):
        await client.batches.put([("finished", PutRequest("app.Member", {}))], description=f"b{n}")
    completed = (await app_client.get("/api/completed", params={"page": 3})).json()
    entries = (await app_client.get("/api/audit", params={"page": 2, "size": 50})).json()
    batches = (await app_client.get("/api/batches", params={"page": 2})).json()
    assert (completed["total"], completed["pages"], completed["size"]) == (60, 3, 25)
    assert [job["jid"] for job in completed["jobs"]] == [f"done{n:02}" for n in range(9, -1, -1)]
    assert (entries["total"], entries["pages"], len(entries["entries"])) == (55, 2, 5)
    assert [e["action"] for e in entries["entries"]] == [f"action{n:02}" for n in range(4, -1, -1)]
    assert (batches["total"], batches["pages"], len(batches["batches"])) == (30, 2, 5)
    for path, total in (("/completed", "60 completed jobs"), ("/audit", "55 entries")):
        html = (await app_client.get(path)).text
        assert total in html
        assert f'href="{path}?page=3"' in html
        assert f'href="{path}?size=50"' in html
    batches_html = (await app_client.get("/batches")).text
    assert "30 batches" in batches_html
    assert 'href="/batches?page=2"' in batches_html
    past = await app_client.get("/api/completed", params={"page": 4})
    assert past.status_code == 400
