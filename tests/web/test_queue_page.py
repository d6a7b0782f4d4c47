"""The queue page's listings: the waiting tab holds waiting jobs only (stalled ones are
counted above it, with their own tab), and the groups table."""

from __future__ import annotations

import re

import httpx

import aqless
from tests.support.clients import pop_one


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
