"""Listings a page at a time: 25, 50 or 100 rows (the rule ``page_size``; anything else is
a 400 naming it), numbered pages (the first, the last, two either side) and the total."""

from __future__ import annotations

import re

import httpx

import aqless
from aqless.puts import PutRequest
from aqless.web.render import page_numbers


def test_page_numbers_are_bounded_whatever_the_number_of_pages() -> None:
    assert page_numbers(1, 1) == [1]
    assert page_numbers(1, 3) == [1, 2, 3]
    assert page_numbers(7, 40) == [1, None, 5, 6, 7, 8, 9, None, 40]
    assert page_numbers(40_000, 40_000) == [1, None, 39_998, 39_999, 40_000]
    assert page_numbers(4, 10) == [1, 2, 3, 4, 5, 6, None, 10]


async def test_a_queue_page_of_50_and_100_rows_with_numbered_pages_and_the_total(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    queue = client.queues["sized"]
    await queue.put_many([PutRequest("app.A", {"n": n}) for n in range(260)])

    default = (await app_client.get("/api/queues/sized")).json()
    assert (len(default["jobs"]), default["size"], default["pages"], default["total"]) == (
        25,
        25,
        11,
        260,
    )
    fifty = (await app_client.get("/api/queues/sized?size=50&page=6")).json()
    assert (len(fifty["jobs"]), fifty["pages"], fifty["page"]) == (10, 6, 6)
    hundred = (await app_client.get("/api/queues/sized?size=100")).json()
    assert len(hundred["jobs"]) == 100
    assert hundred["jobs"][0]["jid"] == default["jobs"][0]["jid"]

    page = (await app_client.get("/queues/sized?state=waiting&size=50&page=3")).text
    pager = page[page.index('class="pager"') :]
    assert "260 waiting jobs" in pager
    assert "Page 3 of 6" in pager
    linked = re.findall(r'href="[^"]*size=50&amp;page=(\d+)"', pager)
    assert linked == ["2", "1", "2", "4", "5", "6", "4"]  # previous, numbers, next
    assert '<span class="btn current" aria-current="page">3</span>' in pager
    assert '<strong aria-current="true">50</strong>' in pager
    assert "size=100" in pager


async def test_a_page_size_outside_the_rule_is_refused_naming_it(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    await client.queues["sized"].put("app.A", {})
    for size in ("10", "1000", "fifty"):
        refused = await app_client.get(f"/api/queues/sized?size={size}")
        assert refused.status_code == 400
        assert "page_size" in refused.text
    failed = await app_client.get("/api/failed/nope?size=7")
    assert failed.status_code in (400, 404)
    tagged = (await app_client.get("/api/tags?tag=none&size=100")).json()
    assert tagged["size"] == 100
