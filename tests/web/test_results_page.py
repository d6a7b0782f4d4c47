"""The job page shows a job's kept result (escaped, indented, cut short when huge), or why
it was not kept; `/api/jobs/<jid>` carries it."""

from __future__ import annotations

import httpx

import aqless
from tests.support.clients import pop_one

PAYLOAD = '<script>window.__pwned=1</script><img src=x onerror="alert(1)">'


async def finished(client: aqless.Client, result: object) -> str:
    jid = await client.queues["q"].put("app.Answer", {})
    await (await pop_one(client.queues["q"], worker="w")).complete(result=result)
    return jid


async def test_the_job_page_shows_the_result_escaped(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    jid = await finished(client, {"html": PAYLOAD, "n": [1, 2]})
    body = (await app_client.get(f"/jobs/{jid}")).text
    assert '<section id="job-result"' in body
    assert "<script>window" not in body
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in body
    assert "&#34;n&#34;: [\n" in body  # indented
    api = (await app_client.get(f"/api/jobs/{jid}")).json()
    assert api["job"]["result"] == {"value": {"html": PAYLOAD, "n": [1, 2]}, "dropped": None}


async def test_a_huge_result_is_cut_short_on_the_page(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    jid = await finished(client, ["y" * 100] * 1000)
    body = (await app_client.get(f"/jobs/{jid}")).text
    assert "more characters)" in body
    assert 100 < body.count("y" * 100) < 1000


async def test_the_page_says_why_a_result_was_not_kept(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    await client.config.set("result-max-bytes", 3)
    jid = await finished(client, PAYLOAD)
    body = (await app_client.get(f"/jobs/{jid}")).text
    assert "Result not kept" in body
    assert "over result-max-bytes (3)" in body


async def test_a_job_without_a_result_shows_none(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    jid = await client.queues["q"].put("app.Answer", {})
    assert 'id="job-result"' not in (await app_client.get(f"/jobs/{jid}")).text
    assert (await app_client.get(f"/api/jobs/{jid}")).json()["job"]["result"] is None
