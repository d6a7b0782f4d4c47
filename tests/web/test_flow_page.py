"""The job page of a job of a flow draws the whole flow as a tree, each job with its state,
everything escaped; `/api/jobs/<jid>` carries the tree."""

from __future__ import annotations

import httpx

import aqless
from aqless.flows import FlowNode
from aqless.ops import audit
from tests.web.conftest import csrf_token

PAYLOAD = '<script>window.__pwned=1</script><img src=x onerror="alert(1)">'


async def test_a_job_of_a_flow_shows_its_tree_escaped(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    children = [
        FlowNode("app.Leaf", queue="q", name=PAYLOAD),
        FlowNode("app.Leaf", queue="q", name="plain", on_failure="ignore"),
    ]
    flow = await client.flows.put(FlowNode(PAYLOAD, queue="q"), children)
    body = (await app_client.get(f"/jobs/{flow.jids[2]}")).text
    assert '<section id="job-flow"' in body
    assert "<script>window" not in body
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in body
    assert body.count('class="flow-node') == 3
    assert 'class="flow-node current"' in body
    assert "on failure: ignore" in body
    api = (await app_client.get(f"/api/jobs/{flow.jids[1]}")).json()
    assert api["flow"]["jid"] == flow.root
    assert [child["state"] for child in api["flow"]["children"]] == ["waiting", "waiting"]


async def test_a_job_of_no_flow_has_no_flow_section(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    jid = await client.queues["q"].put("app.Answer", {})
    body = (await app_client.get(f"/jobs/{jid}")).text
    assert 'id="job-flow"' not in body
    assert (await app_client.get(f"/api/jobs/{jid}")).json()["flow"] is None


async def test_cancelling_a_flow_s_root_from_its_page_removes_the_flow_or_says_why_not(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    flow = await client.flows.put(
        FlowNode("app.Sum", queue="q"), [FlowNode("app.Leaf", queue="q") for _ in range(2)]
    )
    token = csrf_token((await app_client.get(f"/jobs/{flow.root}")).text)
    headers = {"accept": "application/json", "x-aqless-csrf": token}
    popped = await client.queues["q"].pop()
    assert popped is not None
    refused = await app_client.post("/actions/job_cancel", data={"jid": flow.root}, headers=headers)
    assert refused.json()["ok"] is False
    assert f"job {popped.jid} of a flow is running" in refused.json()["message"]
    assert all([await client.jobs.get(jid) for jid in flow.jids])
    await popped.complete()
    done = await app_client.post("/actions/job_cancel", data={"jid": flow.root}, headers=headers)
    assert done.json()["ok"] is True
    assert [await client.jobs.get(jid) for jid in flow.jids] == [None] * 3


async def test_the_flow_tree_cancels_the_whole_flow_and_the_audit_names_its_jobs(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    flow = await client.flows.put(
        FlowNode("app.Sum", queue="q"), [FlowNode("app.Leaf", queue="q") for _ in range(3)]
    )
    page = (await app_client.get(f"/jobs/{flow.jids[2]}")).text
    assert 'action="/actions/flow_cancel"' in page
    assert 'data-confirm="Cancel the whole flow: its 4 jobs?"' in page
    assert f'name="jid" value="{flow.root}"' in page
    headers = {"accept": "application/json", "x-aqless-csrf": csrf_token(page)}
    leaf = await app_client.post(
        "/actions/flow_cancel", data={"jid": flow.jids[2]}, headers=headers
    )
    assert leaf.json() == {
        "ok": False,
        "message": f"{flow.jids[2]} is not the root of its flow ({flow.root} is)",
    }
    done = await app_client.post("/actions/flow_cancel", data={"jid": flow.root}, headers=headers)
    assert done.json() == {"ok": True, "message": f"Cancelled the flow of {flow.root}: 4 jobs"}
    assert await client.jobs.get_many(list(flow.jids)) == []
    entry = (await audit.read(client, limit=1))[0]
    assert (entry.action, entry.detail["count"]) == ("flow_cancel", "4")
    assert set(entry.detail["jids"].split(", ")) == set(flow.jids)
