"""`aqless search`: the dashboard's search at the command line, over every queue and state,
with its cost; an action on every job found after a confirmation, audited with the jids;
a bad filter refused in the dashboard's words."""

from __future__ import annotations

import httpx

import aqless
from aqless.ops import audit
from aqless.web import create_app
from tests.support.cli import Cli

pytest_plugins = ["tests.support.client_fixtures"]


async def fail_all(client: aqless.Client, queue: str, klass: str, n: int) -> list[str]:
    jids = [await client.queues[queue].put(klass, {"n": i}) for i in range(n)]
    for job in await client.queues[queue].pop_many(n):
        await job.fail(f"{queue}-Boom", "it broke")
    return jids


async def test_search_finds_failed_and_completed_jobs_of_every_queue(
    client: aqless.Client, run_cli: Cli
) -> None:
    broken = (await fail_all(client, "billing", "app.Charge", 1))[0]
    done = await client.queues["reports"].put("app.Report", {"month": 3}, tags=["monthly"])
    popped = await client.queues["reports"].pop()
    assert popped is not None
    await popped.complete(result={"rows": 12})
    await client.queues["mail"].put("app.Send", {"month": 3})

    found = (await run_cli("--json", "search", "--result", "rows = 12")).json()
    assert found["jids"] == [done]
    assert found["jobs"][0]["klass"] == "app.Report"
    assert found["cost"]["jobs_read"] == found["examined"] == 3
    by_class = (await run_cli("--json", "search", "--class", "app.Charge")).json()
    assert by_class["jids"] == [broken]
    both = await run_cli("--json", "search", "--where", "month = 3", "--state", "complete,waiting")
    assert both.json()["matched"] == 2
    table = await run_cli("search", "--tag", "monthly")
    assert table.code == 0
    assert done in table.stdout
    assert "1 match in 1 jobs examined of 1 listed; server cost:" in table.stdout


async def test_an_action_on_what_search_found_asks_counts_and_is_audited(
    client: aqless.Client, run_cli: Cli
) -> None:
    wanted = await fail_all(client, "a", "app.Import", 30) + await fail_all(
        client, "b", "app.Import", 30
    )
    others = await fail_all(client, "a", "app.Export", 2)
    declined = await run_cli("search", "--class", "app.Import", "--retry", input="n\n")
    assert declined.code == 1
    assert "retry 60 jobs?" in declined.stderr
    assert {str(j.state) for j in await client.jobs.get_many(wanted)} == {"failed"}

    retried = await run_cli("--json", "search", "--class", "app.Import", "--retry", "--yes")
    action = retried.json()["action"]
    assert (action["done"], action["refused"], action["skipped"]) == (60, {}, {})
    assert {str(j.state) for j in await client.jobs.get_many(wanted)} == {"waiting"}
    assert {str(j.state) for j in await client.jobs.get_many(others)} == {"failed"}
    entry = (await audit.read(client, limit=1))[0]
    assert (entry.via, entry.action, entry.detail["action"]) == ("cli", "search", "retry")
    assert set(entry.detail["jids"].split(", ")) == set(wanted)
    assert entry.detail["class"] == "app.Import"

    moved = await run_cli("search", "--queue", "b", "--move", "c", "--yes")
    assert "moved 30 jobs to c" in moved.stdout
    assert sorted({j.queue_name for j in await client.jobs.get_many(wanted)}) == ["a", "c"]
    two = await run_cli("search", "--queue", "c", "--cancel", "--delete")
    assert two.code == 2
    assert "give one action" in two.stderr
    nothing = await run_cli("search", "--retry", "--yes")
    assert nothing.code == 2
    assert "at least one filter" in nothing.stderr


async def test_a_bad_filter_is_refused_in_the_same_words_as_the_dashboard(
    client: aqless.Client, run_cli: Cli
) -> None:
    app = create_app(client)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://dash"
    ) as http:
        for option, value in (
            ("where", "user.id"),
            ("result", "a..b = 1"),
            ("state", "finished"),
            ("class", "has space"),
            ("limit", "0"),
            ("limit", "10001"),
        ):
            refused = await run_cli("search", f"--{option}", value)
            assert refused.code == 2, (option, value, refused.stderr)
            web = await http.get("/api/search", params={option: value, "tag": "x"})
            assert web.status_code == 400
            said = web.json()["error"]
            assert said.startswith(f"{option} must be "), said
            assert f"Error: {said}" in refused.stderr, (refused.stderr, said)
    unknown = await run_cli("search", "--queue", "nowhere")
    assert unknown.code == 1
    assert "no queue 'nowhere'" in unknown.stderr
