"""Batches on the dashboard: the listing and a batch's page with its progress bar, their /api
twins, a 404 for an expired batch, everything escaped; and the page in a real Chromium."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from playwright.sync_api import Page

import aqless
from aqless import BatchCallback, PutRequest
from tests.web.live_server import LiveServer
from tests.web.test_http import PAYLOAD

BROWSER_PAYLOAD = (
    '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2"><b>bold</b>'
)


async def half_done(client: aqless.Client, description: str) -> str:
    members = [("work", PutRequest("app.Member", {"html": description})) for _ in range(4)]
    # markup in the callback's queue too (a queue's name holds no space: aqless.rules)
    callback = BatchCallback("app.Done", "callbacks" + description.replace(" ", "_"))
    bid = await client.batches.put(members, description=description, on_complete=callback)
    for _ in range(2):
        job = await client.queues["work"].pop()
        assert job is not None
        await job.complete()
    return bid


async def test_the_batch_pages_draw_progress_and_escape_everything(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    bid = await half_done(client, PAYLOAD)
    for path in ("/batches", f"/batches/{bid}"):
        body = (await app_client.get(path)).text
        assert re.search(r'<progress[^>]*max="1" value="0.5"[^>]*>50%</progress>', body), path
        assert "<script>window" not in body, path
        assert "<img src=x" not in body, path
        assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in body, path
    document = (await app_client.get(f"/api/batches/{bid}")).json()
    assert document["batch"]["pending"] == 2
    assert document["batch"]["done"] == 2
    assert document["batch"]["state"] == "running"
    listing = (await app_client.get("/api/batches")).json()
    assert [batch["id"] for batch in listing["batches"]] == [bid]
    missing = await app_client.get("/batches/nope")
    assert missing.status_code == 404


@pytest.mark.parametrize("server_url", ["valkey9"], indirect=True)
@pytest.mark.parametrize("size", [300, 700])  # a small hash comes whole, a big one scanned
async def test_a_batch_page_lists_its_members_a_page_at_a_time(
    client: aqless.Client, app_client: httpx.AsyncClient, size: int
) -> None:
    members = [("work", PutRequest("app.Member", {"n": n})) for n in range(size)]
    bid = await client.batches.put(members)
    job = await client.queues["work"].pop()
    assert job is not None
    await job.fail("work-Boom", "it broke")
    seen: dict[str, str] = {}
    cursor: str | None = "0"
    pages = 0
    while cursor is not None:
        document = (await app_client.get(f"/api/batches/{bid}", params={"members": cursor})).json()
        assert len(document["members"]) <= 50
        seen.update({member["jid"]: member["outcome"] for member in document["members"]})
        cursor, pages = document["next"], pages + 1
        assert pages < 100
    assert len(seen) == size
    assert pages > 1  # paged, not read at once
    assert seen[job.jid] == "failed"
    assert sorted(set(seen.values())) == ["failed", "pending"]
    page = (await app_client.get(f"/batches/{bid}")).text
    assert f"<title>Batch {bid} · aqless</title>" in page
    assert page.count('id="batch-members"') == 1
    assert "Next members" in page
    assert "app.Member" in page


def test_a_batch_page_in_chromium_shows_its_bar_and_runs_no_markup(
    live: LiveServer, page: Page, artifacts: Path
) -> None:
    bid = live.run(lambda client: half_done(client, BROWSER_PAYLOAD))
    for url in ("/batches", "/batches/" + quote(bid, safe="")):
        page.goto(live.url + url)
        assert page.evaluate("window.__pwned") is None, url
        assert page.locator("main b", has_text="bold").count() == 0, url
        assert page.locator("main img").count() == 0, url
        assert BROWSER_PAYLOAD in page.locator("main").inner_text(), url
        assert page.locator("main progress").first.get_attribute("value") == "0.5"
    assert page.get_by_text("not put").is_visible()
    page.screenshot(path=artifacts / "batch.png", full_page=True)
