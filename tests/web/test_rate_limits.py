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
    assert "60 s" in page
