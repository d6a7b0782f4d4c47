"""Names the deployment never saw are a 404 (the page, and JSON at /api) naming the
closest known ones; query parameters out of their rule (a state, a page) are a 400 saying
why; durations and a queue's own limits read in words."""

from __future__ import annotations

import re

import httpx
import pytest

import aqless
from aqless.ops import durations, known
from tests.support.clients import pop_one
from tests.web.conftest import csrf_token


async def billing(client: aqless.Client) -> str:
    return await client.queues["billing"].put("app.Charge", {})


async def failed_billing(client: aqless.Client) -> None:
    """A queue `billing`, a worker `worker-1`, a failure group `billing-Error`."""
    await billing(client)
    job = await pop_one(client.queues["billing"], worker="worker-1")
    await job.fail("billing-Error", "it broke")


@pytest.mark.parametrize(
    ("path", "said"),
    [
        ("/queues/biling", "no queue &#39;biling&#39; (did you mean &#39;billing&#39;?)"),
        ("/failed/billing-Eror", "no failure group &#39;billing-Eror&#39;"),
        ("/workers/worker-one", "no worker &#39;worker-one&#39;"),
    ],
)
async def test_an_unknown_name_is_a_404_page_naming_the_closest(
    client: aqless.Client, app_client: httpx.AsyncClient, path: str, said: str
) -> None:
    await failed_billing(client)
    page = await app_client.get(path)
    assert page.status_code == 404
    assert said in page.text
    api = await app_client.get("/api" + path)
    assert api.status_code == 404
    assert api.json()["ok"] is False
    assert api.json()["error"].startswith("no ")


async def test_the_closest_names_are_offered(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    await failed_billing(client)
    failed = (await app_client.get("/api/failed/billing-Eror")).json()
    assert failed["error"] == "no failure group 'billing-Eror' (did you mean 'billing-Error'?)"
    worker = (await app_client.get("/api/workers/worker-2")).json()
    assert worker["error"] == "no worker 'worker-2' (did you mean 'worker-1'?)"
    assert (await app_client.get("/api/workers/worker-1")).status_code == 200
    assert (await app_client.get("/api/failed/billing-Error")).status_code == 200


async def test_an_unknown_state_is_refused(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    await billing(client)
    page = await app_client.get("/queues/billing", params={"state": "nonsense"})
    assert page.status_code == 400
    assert "state must be one of waiting, running" in page.text
    api = await app_client.get("/api/queues/billing", params={"state": "nonsense"})
    assert api.status_code == 400
    assert "not &#39;nonsense&#39;" not in api.text
    assert api.json()["error"].endswith("not 'nonsense'")
    shown = await app_client.get("/api/queues/billing", params={"state": "recurring"})
    assert shown.json()["state"] == "recurring"


@pytest.mark.parametrize("page", ["0", "-5", "ten", "2", str(10**24)])
async def test_a_page_out_of_range_is_refused(
    client: aqless.Client, app_client: httpx.AsyncClient, page: str
) -> None:
    await billing(client)
    for path in ("/api/queues/billing", "/api/tags", "/api/completed", "/queues/billing"):
        refused = await app_client.get(path, params={"page": page})
        assert refused.status_code == 400, (path, page)
        assert "page must be a whole number from 1" in refused.text
    assert (await app_client.get("/api/queues/billing", params={"page": "1"})).status_code == 200


async def test_a_page_past_the_completed_jobs_is_refused(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    await billing(client)
    await (await pop_one(client.queues["billing"])).complete()
    assert (await app_client.get("/completed", params={"page": "1"})).status_code == 200
    past = await app_client.get("/completed", params={"page": str(10**24)})
    assert past.status_code == 400
    assert "No completed job is kept" not in past.text
    assert "up to 1, the last page" in past.text  # the total is known: the bound is named


async def test_a_next_free_start_reads_in_human_units(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    queue = client.queues["billing"]
    await queue.set_rate_limit(1, per=3600)
    await billing(client)
    await billing(client)
    await pop_one(queue)
    page = (await app_client.get("/throttles")).text
    assert re.search(r"in (59 min \d+ s|1 h)<", page), page
    assert not re.search(r"\d{4}\.\d+ s", page)


async def test_a_queues_own_throttle_reads_as_the_queue(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    jid = await billing(client)
    await client.queues["billing"].set_throttle(2)
    job = (await app_client.get(f"/api/jobs/{jid}")).json()["job"]
    assert "ql:q:billing" in job["throttles"]  # what other clients read stays
    page = (await app_client.get(f"/jobs/{jid}")).text
    assert ">queue billing</a>" in page
    assert ">ql:q:billing<" not in page
    throttles = (await app_client.get("/throttles")).text
    assert "<td>queue billing</td>" in throttles


@pytest.mark.parametrize(
    ("verb", "form", "said"),
    [
        ("failed_group", {"group": "billing-Eror", "action": "retry"}, "no failure group"),
        ("worker_forget", {"worker": "worker-2"}, "no worker 'worker-2' (did you mean"),
    ],
)
async def test_an_action_on_an_unknown_name_is_a_404(
    client: aqless.Client,
    app_client: httpx.AsyncClient,
    verb: str,
    form: dict[str, str],
    said: str,
) -> None:
    await failed_billing(client)
    token = csrf_token((await app_client.get("/failed")).text)
    done = await app_client.post(
        f"/actions/{verb}", data={**form, "csrf": token}, headers={"accept": "application/json"}
    )
    assert done.status_code == 404, done.text
    assert said in done.json()["message"]


async def test_the_scaling_signal_of_an_unknown_queue_is_a_404(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    await billing(client)
    refused = await app_client.get("/api/scaling", params={"queue": "biling"})
    assert refused.status_code == 404
    assert refused.json()["error"] == "no queue 'biling' (did you mean 'billing'?)"
    assert (await app_client.get("/api/scaling", params={"queue": "billing"})).status_code == 200


@pytest.mark.parametrize(
    ("seconds", "reads"),
    [
        (0.25, "250 ms"),
        (12.5, "12.5 s"),
        (59.97, "1 min"),
        (3526.76, "58 min 47 s"),
        (3600, "1 h"),
        (7500, "2 h 5 min"),
        (273600, "3 d 4 h"),
        (-90, "-1 min 30 s"),
    ],
)
def test_one_helper_says_every_duration_in_human_units(seconds: float, reads: str) -> None:
    assert durations.duration(seconds) == reads


def test_a_moment_reads_from_now() -> None:
    assert durations.relative(3526.76) == "in 58 min 47 s"
    assert durations.relative(-180) == "3 min ago"


@pytest.mark.parametrize(
    ("limit", "reads"),
    [
        ("ql:q:billing", "queue billing"),
        ("ns:ql:q:billing", "queue billing"),
        ("{ship~2}:ql:q:a:b", "queue a:b"),
        ("smtp", "smtp"),
        ("ql:queues", "ql:queues"),
    ],
)
def test_a_queues_own_limit_is_labelled_with_its_queue(limit: str, reads: str) -> None:
    assert known.limit_label(limit) == reads


def test_the_closest_names_are_a_few_alike_ones() -> None:
    assert known.closest("biling", ["billing", "shipping", "bill"]) == ["billing", "bill"]
    assert known.closest("nope", ["billing"]) == []
    assert str(known.UnknownNameError("queue", "x")) == "no queue 'x'"
