"""`aqless --json` and the dashboard's `/api` give the same document for the same record:
one set of keys per record (aqless.documents)."""

from __future__ import annotations

from typing import Any

import httpx

import aqless
from tests.support.cli import Cli
from tests.support.clients import get_job, pop_one


async def api(app_client: httpx.AsyncClient, path: str) -> Any:
    response = await app_client.get("/api" + path)
    assert response.status_code == 200, path
    return response.json()


async def test_a_job_is_the_same_document_in_the_cli_and_the_api(
    client: aqless.Client, app_client: httpx.AsyncClient, server_url: str
) -> None:
    run_cli = Cli(server_url)
    queue = client.queues["emails"]
    failed = await queue.put("app.Send", {"to": "ann"}, tags=["vip"], priority=3, retries=4)
    await (await pop_one(queue, worker="w-1")).fail("Boom", "Traceback\nValueError: boom")
    await (await get_job(client, failed)).track()
    running = await queue.put("app.Send", {"to": "bob"}, throttles=["smtp"])
    held = await pop_one(queue, worker="w-2")
    assert held.jid == running
    await held.log("halfway", step=2)
    rjid = await queue.recur("app.Report", {"full": True}, interval=60, tags=["daily"])
    for jid in (failed, running, rjid):
        cli = (await run_cli("--json", "get", jid)).json()
        served = (await api(app_client, f"/jobs/{jid}"))["job"]
        assert cli == served, jid
    # the qless job object's names, with what the test made
    document = (await api(app_client, f"/jobs/{running}"))["job"]
    assert document["expires"] > 0
    assert document["remaining"] == document["retries"] == 5
    assert {"when", "what", "step"} <= set(document["history"][-1])
    page = (await app_client.get(f"/jobs/{running}")).text  # the template reads the same keys
    assert '<span class="muted">step</span> 2' in page
    assert '<span class="muted">when</span>' not in page
    assert "Retries left</dt><dd>5 of 5" in page
    failure = (await api(app_client, f"/jobs/{failed}"))["job"]
    assert (failure["failure"]["group"], failure["tracked"]) == ("Boom", True)
    assert (await api(app_client, f"/jobs/{rjid}"))["job"]["state"] == "recur"


async def test_counts_stats_workers_and_throttles_are_the_same_documents(
    client: aqless.Client, app_client: httpx.AsyncClient, server_url: str
) -> None:
    run_cli = Cli(server_url)
    queue = client.queues["emails"]
    await queue.put("app.Send", {}, throttles=["smtp"])
    await queue.put("app.Send", {}, delay=60)
    await client.throttles["smtp"].set(2)
    await pop_one(queue, worker="w-1")
    page = await api(app_client, "/queues/emails")
    counts = (await run_cli("--json", "queues")).json()
    assert counts == [page["counts"]]
    assert (page["counts"]["running"], page["counts"]["scheduled"]) == (1, 1)
    stats = (await run_cli("--json", "stats", "emails")).json()
    assert {"queue": "emails", **{k: v for k, v in page["today"].items() if k != "date"}} == stats
    assert stats["wait"]["count"] == 1
    workers = (await run_cli("--json", "workers")).json()
    assert workers == (await api(app_client, "/workers"))["workers"]
    assert workers == [{"name": "w-1", "jobs": 1, "stalled": 0, "info": None}]
    throttle = (await run_cli("--json", "throttle", "show", "smtp")).json()
    assert [throttle] == (await api(app_client, "/throttles"))["throttles"]
    assert (throttle["maximum"], len(throttle["locks"])) == (2, 1)
