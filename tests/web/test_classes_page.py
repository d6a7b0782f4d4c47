"""The Classes page and its JSON twin: each job class's figures per queue over this hour
and the last day, as a table and as charts."""

from __future__ import annotations

import httpx

import aqless
from tests.cli.test_stats_by_class import finish


async def test_the_classes_page_lists_and_charts_each_class(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    empty = (await app_client.get("/classes")).text
    assert "No job completed or failed in the last day." in empty
    await finish(client, "mail", "app.<Send>", [0.2, 0.2, 0.2, -1.0])
    await finish(client, "reports", "app.Daily", [5.0])

    listing = (await app_client.get("/api/classes")).json()["classes"]
    assert [(f["queue"], f["klass"], f["window"]) for f in listing] == [
        ("mail", "app.<Send>", "hour"),
        ("mail", "app.<Send>", "day"),
        ("reports", "app.Daily", "hour"),
        ("reports", "app.Daily", "day"),
    ]
    assert (listing[0]["completed"], listing[0]["failed"]) == (3, 1)
    assert listing[0]["failure_rate"] == 0.25

    page = (await app_client.get("/classes")).text
    assert "app.&lt;Send&gt;" in page
    assert "app.<Send>" not in page
    assert '<td class="num rate">25.0%</td>' in page
    assert page.count("<svg") == 4  # quantiles and outcomes, over the hour and the day
    assert "Run time (ms, upper bounds), this hour" in page
    assert 'href="/classes"' in page  # in the navigation
