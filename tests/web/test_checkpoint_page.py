"""The job page shows the job's checkpoint (escaped, indented), and `/api/jobs/<jid>` carries
it; a job without one shows none."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import Page

import aqless
from tests.support.clients import pop_one
from tests.web.live_server import LiveServer

PAYLOAD = '<script>window.__pwned=1</script><img src=x onerror="alert(1)">'


async def test_the_job_page_shows_the_checkpoint_escaped(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    jid = await client.queues["q"].put("app.Import", {})
    job = await pop_one(client.queues["q"], worker="w")
    assert 'id="job-checkpoint"' not in (await app_client.get(f"/jobs/{jid}")).text
    assert (await app_client.get(f"/api/jobs/{jid}")).json()["job"]["checkpoint"] is None
    await job.checkpoint({"offset": 4000, "html": PAYLOAD})
    body = (await app_client.get(f"/jobs/{jid}")).text
    assert '<section id="job-checkpoint"' in body
    assert "<script>window" not in body
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in body
    assert "&#34;offset&#34;: 4000" in body  # indented JSON
    api = (await app_client.get(f"/api/jobs/{jid}")).json()
    assert api["job"]["checkpoint"] == {"state": {"offset": 4000, "html": PAYLOAD}}


BROWSER_PAYLOAD = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'


@pytest.mark.parametrize("server_url", ["valkey9"], indirect=True)
def test_a_browser_shows_the_checkpoint_as_text(live: LiveServer, page: Page) -> None:
    async def checkpointed(client: aqless.Client) -> str:
        await client.redis.flushdb()
        jid = await client.queues["imports"].put("app.Import", {})
        job = await pop_one(client.queues["imports"], worker="w")
        await job.checkpoint({"offset": 3000, "note": BROWSER_PAYLOAD})
        return jid

    jid = live.run(checkpointed)
    page.goto(f"{live.url}/jobs/{jid}")
    shown = page.locator("#job-checkpoint pre.json").inner_text()
    assert '"offset": 3000' in shown
    assert BROWSER_PAYLOAD.replace('"', '\\"') in shown  # the JSON text, as text
    assert page.evaluate("window.__pwned") is None
