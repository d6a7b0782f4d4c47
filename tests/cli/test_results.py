"""`aqless get` shows a job's kept result, or why it was not kept, and --json carries it."""

from __future__ import annotations

import aqless
from tests.support.cli import Cli
from tests.support.clients import pop_one

pytest_plugins = ["tests.support.client_fixtures"]


async def test_get_shows_the_result(client: aqless.Client, run_cli: Cli) -> None:
    jid = await client.queues["q"].put("app.Answer", {})
    await (await pop_one(client.queues["q"], worker="w")).complete(result={"answer": "forty-two"})
    outcome = await run_cli("get", jid)
    assert outcome.code == 0
    assert "result" in outcome.stdout
    assert '"answer": "forty-two"' in outcome.stdout
    document = (await run_cli("--json", "get", jid)).json()
    assert document["result"] == {"value": {"answer": "forty-two"}, "dropped": None}


async def test_get_says_why_a_result_was_not_kept(client: aqless.Client, run_cli: Cli) -> None:
    await client.config.set("result-max-bytes", 5)
    jid = await client.queues["q"].put("app.Answer", {})
    await (await pop_one(client.queues["q"], worker="w")).complete(result="far too long")
    outcome = await run_cli("get", jid)
    assert "result not kept" in outcome.stdout
    assert "over result-max-bytes (5)" in outcome.stdout
    document = (await run_cli("--json", "get", jid)).json()
    assert document["result"]["value"] is None
    assert "over result-max-bytes" in document["result"]["dropped"]


async def test_get_of_a_job_without_a_result(client: aqless.Client, run_cli: Cli) -> None:
    jid = await client.queues["q"].put("app.Answer", {})
    assert (await run_cli("--json", "get", jid)).json()["result"] is None
    assert "result" not in (await run_cli("get", jid)).stdout


async def test_a_huge_result_is_cut_short(client: aqless.Client, run_cli: Cli) -> None:
    jid = await client.queues["q"].put("app.Answer", {})
    await (await pop_one(client.queues["q"], worker="w")).complete(result=["x" * 100] * 500)
    outcome = await run_cli("get", jid)
    assert "more characters)" in outcome.stdout
    assert 100 < outcome.stdout.count("x" * 100) < 500
