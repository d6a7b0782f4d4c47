"""Job progress on the dashboard: a <progress> bar on the job page and on the queue's running
jobs, in their /api twins, escaped, and a report's event reaching the live stream."""

from __future__ import annotations

import re

import httpx

import aqless
from tests.web.test_http import PAYLOAD


async def running_job(client: aqless.Client, queue: str = "resize") -> aqless.Job:
    await client.queues[queue].put("app.Resize", {})
    job = await client.queues[queue].pop()
    assert job is not None
    return job


async def test_the_job_page_draws_the_bar(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    job = await running_job(client)
    page = (await app_client.get(f"/jobs/{job.jid}")).text
    assert "<progress" not in page
    await job.progress(0.4, "resized 4 of 10")
    page = (await app_client.get(f"/jobs/{job.jid}")).text
    assert re.search(r'<progress max="1" value="0.4"[^>]*>40%</progress>', page)
    assert "resized 4 of 10" in page
    document = (await app_client.get(f"/api/jobs/{job.jid}")).json()
    assert document["job"]["progress"]["fraction"] == 0.4
    assert document["job"]["progress"]["message"] == "resized 4 of 10"


async def test_the_queue_page_draws_a_bar_per_running_job(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    first, second = await running_job(client), await running_job(client)
    await first.progress(1, "done")
    page = (await app_client.get("/queues/resize?state=running")).text
    assert page.count("<progress") == 1
    assert re.search(r'<progress max="1" value="1.0"[^>]*>100%</progress>', page)
    listing = (await app_client.get("/api/queues/resize?state=running")).json()
    reports = {job["jid"]: job["progress"] for job in listing["jobs"]}
    assert reports[second.jid] is None
    assert reports[first.jid]["message"] == "done"


async def test_a_progress_message_is_escaped(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    job = await running_job(client)
    await job.progress(0.5, PAYLOAD)
    for path in (f"/jobs/{job.jid}", "/queues/resize?state=running"):
        body = (await app_client.get(path)).text
        assert "<script>window" not in body, path
        assert "<img src=x" not in body, path
        assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in body, path


async def test_pages_listing_running_jobs_without_their_progress_render(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    await client.queues["resize"].put("app.Resize", {}, tags=["photos"])
    job = await client.queues["resize"].pop()
    assert job is not None
    await job.progress(0.5)
    for path in ("/tags?tag=photos", f"/workers/{job.worker_name}", "/queues/resize?state=running"):
        response = await app_client.get(path)
        assert response.status_code == 200, path
        assert job.jid[:12] in response.text, path
