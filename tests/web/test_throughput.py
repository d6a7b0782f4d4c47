"""The queue page's throughput: completed and failed jobs per minute as the script counts
them, in its JSON and as two charts (the last hour by minute, the last day by hour)."""

from __future__ import annotations

import time

import httpx

import aqless
from aqless.web.throughput import per_minute, throughput_charts, throughput_document
from tests.support.clients import pop_one


async def test_completions_and_failures_show_per_minute(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    queue = client.queues["emails"]
    for _ in range(3):
        await queue.put("app.Send", {})
    await (await pop_one(queue, worker="w")).complete()
    await (await pop_one(queue, worker="w")).complete()
    await (await pop_one(queue, worker="w")).fail("smtp", "down")
    now = time.time()
    minutes = await per_minute(client, "emails", now)
    assert sum(c for c, _ in minutes.values()) == 2
    assert sum(f for _, f in minutes.values()) == 1
    assert all(now - 120 < at <= now for at in minutes)

    page = (await app_client.get("/api/queues/emails")).json()
    rows = page["throughput"]["minutes"]
    assert [sum(row[1] for row in rows), sum(row[2] for row in rows)] == [2, 1]
    html = (await app_client.get("/queues/emails")).text
    assert "Jobs per minute, last hour (UTC)" in html
    assert "Jobs per hour, last day (UTC)" in html
    assert 'class="bar s-completed"' in html


def test_the_charts_put_each_count_in_its_minute_and_its_hour() -> None:
    now = 1_800_000_000 + 59  # 08:00:59 UTC: the last hour is 07:01 ... 08:00
    this_hour = now - now % 3600
    minutes = {
        now - 59: (4, 1),  # this minute
        now - 59 - 60 * 59: (2, 0),  # the first minute of the last hour
        now - 59 - 60 * 60: (7, 0),  # too old for the hour chart, in the day chart
        this_hour - 3600 * 24: (9, 9),  # too old for both
    }
    hour, day = throughput_charts(throughput_document(minutes, now))
    assert hour.legend == ["completed", "failed"]
    completed = {bar.title for bar in hour.bars if bar.series == "completed"}
    assert {"08:00: 4 completed", "07:01: 2 completed"} <= completed
    assert not any(title.startswith("07:00") for title in completed)
    assert len(hour.bars) == 60 * 2
    day_titles = {bar.title for bar in day.bars}
    assert "08:00: 4 completed" in day_titles
    assert "07:00: 9 completed" in day_titles  # 2 + 7
    assert "08:00: 9 completed" not in day_titles  # a day ago: the chart starts at 09:00
    assert len(day.bars) == 24 * 2
    empty, _ = throughput_charts(throughput_document({}, now))
    assert empty.empty
