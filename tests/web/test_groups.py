"""The queue page shows a grouped queue's fairness groups in a small table, escaped."""

from __future__ import annotations

import httpx

import aqless
from aqless import PutRequest

NO_RATE = {"rate_limit": 0, "rate_period": 0.0, "rate_used": 0}


async def test_the_queue_page_lists_its_groups_escaped(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    queue = client.queues["q"]
    name = "<b>tenant</b>"
    await queue.put_many([PutRequest("app.Call", group=name)] * 3 + [PutRequest("app.Call")])
    await queue.set_group_weight(name, 2)
    await queue.pop_many(2)
    document = (await app_client.get("/api/queues/q")).json()
    assert document["groups"] == [
        {"name": None, "waiting": 0, "running": 1, "weight": 1.0, "concurrency": 0, **NO_RATE},
        {"name": name, "waiting": 2, "running": 1, "weight": 2.0, "concurrency": 0, **NO_RATE},
    ]
    page = (await app_client.get("/queues/q")).text
    assert 'id="groups"' in page
    assert "&lt;b&gt;tenant&lt;/b&gt;" in page
    assert name not in page


async def test_the_queue_page_shows_a_groups_rate_limit(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    queue = client.queues["q"]
    await queue.set_group_rate_limit("<i>a</i>", 2, per=0.5)
    await queue.put_many([PutRequest("app.Call", group="<i>a</i>")] * 3)
    await queue.pop_many(3)
    (document,) = (await app_client.get("/api/queues/q")).json()["groups"]
    assert (document["rate_limit"], document["rate_period"], document["rate_used"]) == (2, 0.5, 2)
    page = (await app_client.get("/queues/q")).text
    assert "2 of 2 per 500 ms" in page
    assert "&lt;i&gt;a&lt;/i&gt;" in page
    assert "<i>a</i>" not in page


async def test_an_ungrouped_queue_shows_no_groups(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    await client.queues["q"].put("app.Call", {})
    assert (await app_client.get("/api/queues/q")).json()["groups"] == []
    assert 'id="groups"' not in (await app_client.get("/queues/q")).text


async def test_every_table_of_the_queue_page_is_styled(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    queue = client.queues["q"]
    await queue.put_many([PutRequest("app.Call", group="tenant")] * 2)
    page = (await app_client.get("/queues/q")).text
    groups = page[page.index('id="groups"') :]
    assert groups.index('<table class="grid groups">') < groups.index("tenant")
    assert "<table>" not in page  # a bare table draws with the browser's defaults
