"""`aqless signal` sends a signal to a workflow (checked by the rules, audited); `aqless get`
and the listings show a parked workflow and its steps; `aqless workflows` lists a queue's
parked workflows."""

from __future__ import annotations

from typing import Any

import aqless
from aqless import WorkflowContext
from aqless.ops import audit
from tests.support.cli import Cli
from tests.support.worker import make_worker, running, until

pytest_plugins = ["tests.support.client_fixtures"]


def approval_handlers() -> aqless.Handlers:
    handlers = aqless.Handlers()

    @handlers.workflow("wf.Approval")
    async def approval(ctx: WorkflowContext) -> Any:
        await ctx.step("ask", lambda: "asked")
        return await ctx.wait_for("approval")

    return handlers


async def is_scheduled(client: aqless.Client, jid: str) -> bool:
    job = await client.jobs.get(jid)
    return isinstance(job, aqless.Job) and str(job.state) == "scheduled"


async def test_a_parked_workflow_is_shown_and_signalled(
    client: aqless.Client, run_cli: Cli
) -> None:
    jid = await client.queues["q"].put("wf.Approval", {})
    async with running(make_worker(client, handlers=approval_handlers(), interval=0.1)):
        await until(lambda: is_scheduled(client, jid), what="parked")
        shown = await run_cli("get", jid)
        assert "waiting for signal 'approval', no timeout" in shown.stdout
        assert "workflow steps" in shown.stdout
        assert "asked" in shown.stdout
        listed = await run_cli("jobs", "q", "scheduled")
        assert "waiting for signal 'approval'" in listed.stdout
        sent = await run_cli("--json", "signal", jid, "approval", '{"by": "mia"}', "--id", "a1")
        assert sent.json() == {"jid": jid, "signal": "approval", "delivery": "woken"}
        assert await client.result(jid, timeout=10) == {"by": "mia"}
    again = await run_cli("signal", jid, "approval")
    assert again.code == 3  # the workflow has ended
    (refused, entry) = await audit.read(client)
    assert (entry.action, entry.targets, entry.outcome) == (
        "signal",
        (jid, "approval", '{"by": "mia"}'),
        "ok",
    )
    assert entry.detail == {"signal_id": "a1"}
    assert refused.outcome != "ok"


async def test_bad_inputs_are_usage_errors(client: aqless.Client, run_cli: Cli) -> None:
    jid = await client.queues["q"].put("wf.Approval", {})
    assert (await run_cli("signal", jid, "approval", "{not json")).code == 2
    assert (await run_cli("signal", jid, "")).code == 2
    assert (await run_cli("signal", "missing", "approval")).code == 1
    assert await client.redis.hlen(f"ql:j:{jid}") > 0
    assert not await client.redis.hexists(f"ql:j:{jid}", "wf-signals")


async def test_workflows_lists_a_queue_s_parked_workflows_by_why(
    client: aqless.Client, run_cli: Cli
) -> None:
    handlers = approval_handlers()

    @handlers.workflow("wf.Nap")
    async def nap(ctx: WorkflowContext) -> str:
        await ctx.sleep(3600)
        return "woke"

    waiting = await client.queues["q"].put("wf.Approval", {})
    asleep = await client.queues["q"].put("wf.Nap", {})
    await client.queues["q"].put("app.Later", {}, delay=3600)  # scheduled, not a workflow
    async with running(make_worker(client, handlers=handlers, interval=0.1)):
        await until(lambda: is_scheduled(client, waiting), what="parked")
        await until(lambda: is_scheduled(client, asleep), what="asleep")
    listed = (await run_cli("--json", "workflows", "q")).json()["workflows"]
    assert {(w["jid"], w["kind"], w["steps"]) for w in listed} == {
        (waiting, "signal", 1),
        (asleep, "sleep", 0),
    }
    only = (await run_cli("--json", "workflows", "q", "--kind", "signal")).json()
    assert [w["jid"] for w in only["workflows"]] == [waiting]
    shown = await run_cli("workflows", "q")
    assert "waiting for signal 'approval'" in shown.stdout
    assert "asleep" in shown.stdout
    assert (await run_cli("workflows", "q", "--kind", "nap")).code == 2


async def test_workflows_lists_one_waiting_for_its_children(
    client: aqless.Client, run_cli: Cli
) -> None:
    handlers = aqless.Handlers()

    @handlers.workflow("wf.Fan")
    async def fan(ctx: WorkflowContext) -> Any:
        return await ctx.gather(await ctx.child("app.Kid", {}, queue="kids"))

    fanning = await client.queues["q"].put("wf.Fan", {})
    await client.queues["q"].put("app.Blocked", {}, depends=[fanning])  # depends, no workflow

    async def in_depends() -> bool:
        job = await client.jobs.get(fanning)
        return isinstance(job, aqless.Job) and str(job.state) == "depends"

    async with running(make_worker(client, handlers=handlers, interval=0.1)):
        await until(in_depends, what="waiting for its child")
    listed = (await run_cli("--json", "workflows", "q")).json()["workflows"]
    assert [(w["jid"], w["kind"]) for w in listed] == [(fanning, "children")]
    only = (await run_cli("--json", "workflows", "q", "--kind", "children")).json()
    assert [w["jid"] for w in only["workflows"]] == [fanning]
    assert (await run_cli("--json", "workflows", "q", "--kind", "sleep")).json()["workflows"] == []
    assert "waiting for children" in (await run_cli("workflows", "q")).stdout
