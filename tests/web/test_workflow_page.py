"""The job page shows a parked workflow (why, until when) and its steps; a queue's listing
says why its scheduled workflows wait."""

from __future__ import annotations

from typing import Any

import httpx

import aqless
from aqless import WorkflowContext
from aqless.ops import audit
from tests.support.worker import make_worker, running, until
from tests.web.conftest import csrf_token

PAYLOAD = "<script>window.__pwned=1</script>"


async def is_scheduled(client: aqless.Client, jid: str) -> bool:
    job = await client.jobs.get(jid)
    return isinstance(job, aqless.Job) and str(job.state) == "scheduled"


async def test_the_job_page_shows_a_parked_workflow_and_its_steps(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    handlers = aqless.Handlers()

    @handlers.workflow("wf.Review")
    async def review(ctx: WorkflowContext) -> Any:
        await ctx.step("draft", lambda: {"html": PAYLOAD})
        return await ctx.wait_for("approval", timeout=3600)

    jid = await client.queues["q"].put("wf.Review", {})
    plain = await client.queues["q"].put("app.Plain", {}, delay=3600)
    async with running(make_worker(client, ["q"], handlers=handlers, interval=0.1)):
        await until(lambda: is_scheduled(client, jid), what="parked")
        body = (await app_client.get(f"/jobs/{jid}")).text
        assert "<dt>Parked</dt><dd>waiting for signal &#39;approval&#39; until " in body
        assert '<section id="job-workflow"' in body
        assert "<td>draft</td>" in body
        assert "<script>window" not in body
        listing = (await app_client.get("/queues/q?state=scheduled")).text
        assert listing.count("waiting for signal &#39;approval&#39; · wakes in ") == 1
        assert "Parked" not in (await app_client.get(f"/jobs/{plain}")).text
        await client.signal(jid, "approval", "ok")
        assert await client.result(jid, timeout=10) == "ok"
    done = (await app_client.get(f"/jobs/{jid}")).text
    assert "<dt>Parked</dt>" not in done
    assert '<section id="job-workflow"' in done


async def test_the_dashboard_signals_a_workflow_and_audits_it(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    handlers = aqless.Handlers()

    @handlers.workflow("wf.Gate")
    async def gate(ctx: WorkflowContext) -> Any:
        return await ctx.wait_for("open")

    jid = await client.queues["q"].put("wf.Gate", {})
    async with running(make_worker(client, ["q"], handlers=handlers, interval=0.1)):
        await until(lambda: is_scheduled(client, jid), what="parked")
        page = (await app_client.get(f"/jobs/{jid}")).text
        assert 'name="signal" required value="open"' in page  # the form offers its signal
        token = csrf_token(page)
        headers = {"accept": "application/json", "x-aqless-csrf": token}
        form = {"jid": jid, "signal": "open", "payload": '{"by": "ops"}', "signal_id": "o1"}
        bad = await app_client.post(
            "/actions/job_signal", data={**form, "payload": "{no"}, headers=headers
        )
        assert (bad.status_code, bad.json()["ok"]) == (400, False)
        done = await app_client.post("/actions/job_signal", data=form, headers=headers)
        assert done.json() == {"ok": True, "message": f"Signal open to {jid}: woken"}
        again = await app_client.post("/actions/job_signal", data=form, headers=headers)
        assert again.json()["message"] == f"Signal open to {jid}: duplicate"
        assert await client.result(jid, timeout=10) == {"by": "ops"}
    entries = await audit.read(client)
    assert [entry.action for entry in entries] == ["job_signal"] * 3
    assert entries[-1].outcome != "ok"  # the refused one, first
