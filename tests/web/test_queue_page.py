"""The queue page's listings: the waiting tab holds waiting jobs only (stalled ones are
counted above it, with their own tab), and the groups table."""

from __future__ import annotations

import base64
import re

import httpx

import aqless
from aqless.ops import audit
from aqless.web import create_app
from aqless.web.auth import Users
from tests.support.clients import pop_one
from tests.web.conftest import csrf_token

JSON = {"accept": "application/json"}


async def test_the_waiting_tab_lists_waiting_jobs_and_counts_the_stalled_apart(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    queue = client.queues["q"]
    stalled = await queue.put("app.Job", {}, jid="stalled-one", priority=5)
    for n in range(2):
        await queue.put("app.Job", {}, jid=f"waiting-{n}")
    assert (await pop_one(queue)).jid == stalled
    await client.redis.zadd(f"{client.prefix}q:q-locks", {stalled: 1})  # its lock expired
    assert (await queue.counts()).stalled == 1
    api = (await app_client.get("/api/queues/q", params={"state": "waiting"})).json()
    assert sorted(job["jid"] for job in api["jobs"]) == ["waiting-0", "waiting-1"]
    page = (await app_client.get("/queues/q", params={"state": "waiting"})).text
    listing = page[page.index('id="listing"') :]
    assert re.search(r"1 stalled job</a> \(a worker's lock expired\) comes before these", listing)
    assert "stalled-one" not in listing.split("stalled-first")[1]  # not a row of the table


def basic(name: str, secret: str) -> dict[str, str]:
    return {"authorization": "Basic " + base64.b64encode(f"{name}:{secret}".encode()).decode()}


ADMIN, READER = basic("ann", "open"), basic("bob", "look")


async def test_an_admin_empties_a_queue_confirmed_with_its_count_and_audited(
    client: aqless.Client,
) -> None:
    queue = client.queues["q<i>"]
    running = await queue.put("app.Job", {}, priority=9)
    await pop_one(queue)
    waiting = [await queue.put("app.Job", {}) for _ in range(3)]
    scheduled = await queue.put("app.Job", {}, delay=600)
    app = create_app(client, users=Users(["ann:open", "bob:look:read-only"]))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://d"
    ) as http:
        page = (await http.get("/queues/q%3Ci%3E", headers=ADMIN)).text
        question = "Cancel 4 jobs of q&lt;i&gt; (scheduled 1, waiting 3)? Running, stalled"
        assert f'data-confirm="{question}' in page
        assert "queue_empty" not in (await http.get("/queues/q%3Ci%3E", headers=READER)).text
        form = {"queue": "q<i>", "csrf": csrf_token(page)}
        refused = await http.post("/actions/queue_empty", data=form, headers=READER)
        assert refused.status_code == 403
        assert (await queue.counts()).waiting == 3

        for name, status in (("", 400), ("nowhere", 404)):
            bad = await http.post(
                "/actions/queue_empty", data={**form, "queue": name}, headers=ADMIN | JSON
            )
            assert bad.status_code == status, bad.text
        done = await http.post("/actions/queue_empty", data=form, headers=ADMIN | JSON)
        assert done.json() == {
            "ok": True,
            "message": "Cancelled 4 jobs of q<i> (scheduled 1, waiting 3)",
        }
    counts = await queue.counts()
    assert (counts.waiting, counts.scheduled, counts.running) == (0, 0, 1)
    assert (await client.jobs.get(running)) is not None
    entry = (await audit.read(client, limit=1))[0]
    assert (entry.who, entry.action, entry.targets) == ("ann", "queue_empty", ("q<i>",))
    assert entry.detail["count"] == "4"
    assert sorted(entry.detail["jids"].split(", ")) == sorted([*waiting, scheduled])
