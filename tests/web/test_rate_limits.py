"""The throttles page shows the rate limits: limit, use in the window, next free start."""

from __future__ import annotations

import httpx

import aqless
from tests.support.clients import pop_one


async def test_the_throttles_page_shows_rate_limits_escaped(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    name = "<b>api</b>"
    await client.rate_limits[name].set(1, per=60)
    await client.queues["q"].put("app.Call", {}, rate_limits=[name])
    await pop_one(client.queues["q"])
    document = (await app_client.get("/api/throttles")).json()
    (limit,) = document["rate_limits"]
    assert (limit["id"], limit["limit"], limit["used"]) == (name, 1, 1)
    assert 59 < limit["wait"] <= 60
    page = (await app_client.get("/throttles")).text
    assert "Rate limits" in page
    assert "&lt;b&gt;api&lt;/b&gt;" in page
    assert "<b>api</b>" not in page
    assert "1 min" in page


async def test_a_job_held_back_by_a_rate_limit_shows_as_rate_limited_with_its_next_start(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    name = "<b>api</b>"
    await client.rate_limits[name].set(1, per=60)
    queue = client.queues["q"]
    await queue.put("app.Call", {}, rate_limits=[name])
    held = await queue.put("app.Call", {}, rate_limits=[name])
    delayed = await queue.put("app.Call", {}, rate_limits=[name], delay=3600)
    plain = await queue.put("app.Call", {}, delay=600)
    before = client.clock()
    assert len(await queue.pop_many(2, worker="w")) == 1  # the other one waits for a start
    now = client.clock()
    document = (await app_client.get("/api/queues/q", params={"state": "scheduled"})).json()
    jobs = {job["jid"]: job for job in document["jobs"]}
    assert [limit["id"] for limit in jobs[held]["held_by"]] == [name]
    assert before + 60 <= jobs[held]["next_start"] <= now + 60  # the limit's next free start
    assert (jobs[delayed]["held_by"], jobs[delayed]["rate_limits"]) == ([], [name])
    assert jobs[delayed]["next_start"] > now + 3000
    assert (jobs[plain]["held_by"], jobs[plain]["rate_limits"]) == ([], [])

    page = (await app_client.get("/queues/q", params={"state": "scheduled"})).text
    assert page.count('<span class="state state-rate-limited">rate-limited</span>') == 1
    assert page.count('<span class="state state-scheduled">scheduled</span>') == 2
    assert 'rate-limited by <a class="tag" href="/throttles">&lt;b&gt;api&lt;/b&gt;</a>' in page
    assert "<b>api</b>" not in page
    assert page.count("next start in ") == 3


async def test_the_queue_header_shows_its_throttle_and_rate_limit(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    queue = client.queues["q"]
    await queue.put("app.Call", {})
    page = (await app_client.get("/queues/q")).text
    assert '<span class="throttle">no throttle</span>' in page
    assert '<span class="rate-limit">no rate limit</span>' in page
    await queue.set_throttle(3)
    await queue.set_rate_limit(5, per=10)
    await pop_one(queue)
    document = (await app_client.get("/api/queues/q")).json()
    assert (document["rate_limit"]["limit"], document["rate_limit"]["used"]) == (5, 1)
    page = (await app_client.get("/queues/q")).text
    assert "throttle: at most 3 running at once" in page
    assert "rate limit: at most 5 starts per 10 s (1 in the window)" in page
