"""`aqless flow JID` draws the flow a job belongs to, each job with its state."""

from __future__ import annotations

import aqless
from aqless.flows import FlowNode
from tests.support.cli import Cli

pytest_plugins = ["tests.support.client_fixtures"]


async def test_flow_draws_the_tree_with_each_job_s_state(
    client: aqless.Client, run_cli: Cli
) -> None:
    middle = FlowNode(
        "app.Sum", queue="q", name="middle", children=[FlowNode("app.Leaf", queue="q")]
    )
    flow = await client.flows.put(
        FlowNode("app.Report", queue="q"), [middle, FlowNode("app.Leaf", queue="q", name="x")]
    )
    outcome = await run_cli("flow", flow.jids[2])  # a grandchild draws the whole flow
    assert outcome.code == 0
    lines = outcome.stdout.splitlines()
    assert lines[0].startswith("app.Report")
    assert "[depends]" in lines[0]
    assert "middle: app.Sum" in lines[1]
    assert "[depends]" in lines[1]
    assert flow.jids[2] in lines[2]
    assert "[waiting]" in lines[2]
    assert "x: app.Leaf" in lines[3]
    document = (await run_cli("--json", "flow", flow.root)).json()
    assert document["jid"] == flow.root
    assert [child["name"] for child in document["children"]] == ["middle", "x"]


async def test_flow_of_a_missing_job(client: aqless.Client, run_cli: Cli) -> None:
    outcome = await run_cli("flow", "nope")
    assert outcome.code != 0
    assert "no job nope" in outcome.stdout + outcome.stderr


async def test_cancel_of_a_flow_s_root_removes_the_flow_and_lists_every_job(
    client: aqless.Client, run_cli: Cli
) -> None:
    middle = FlowNode("app.Sum", queue="q", children=[FlowNode("app.Leaf", queue="q")])
    flow = await client.flows.put(FlowNode("app.Report", queue="q"), [middle])
    outcome = await run_cli("--json", "cancel", flow.root)
    assert outcome.code == 0
    assert outcome.json() == {"cancelled": list(flow.jids)}
    assert [await client.jobs.get(jid) for jid in flow.jids] == [None] * 3


async def test_cancel_of_a_flow_while_a_job_of_it_runs_is_refused(
    client: aqless.Client, run_cli: Cli
) -> None:
    flow = await client.flows.put(
        FlowNode("app.Report", queue="q"), [FlowNode("app.Leaf", queue="q")]
    )
    assert await client.queues["q"].pop() is not None
    outcome = await run_cli("cancel", flow.root)
    assert outcome.code == 3
    assert f"job {flow.jids[1]} of a flow is running" in outcome.stderr
    assert all([await client.jobs.get(jid) for jid in flow.jids])
