"""A state-changing request from another site's page is refused, whatever its session and
token; every refused request is audited, bulk actions with the jobs they changed, edits with
the value they replaced. In-process, on both servers."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator

import httpx
import pytest

import aqless
from aqless.errors import ConfigurationError
from aqless.ops import audit
from aqless.web import create_app
from aqless.web.auth import Users
from tests.web.conftest import csrf_token

JSON = {"accept": "application/json"}


def session(client: aqless.Client, **options: object) -> httpx.AsyncClient:
    app = create_app(client, **options)  # type: ignore[arg-type]
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://dash")


async def token_of(http: httpx.AsyncClient, **headers: str) -> str:
    return csrf_token((await http.get("/config", headers=headers)).text)


@pytest.fixture
async def http(client: aqless.Client) -> AsyncIterator[httpx.AsyncClient]:
    async with session(client, trusted_origins=["https://ops.example.com"]) as opened:
        yield opened


async def test_a_foreign_origin_is_refused_with_a_valid_session_and_token(
    client: aqless.Client, http: httpx.AsyncClient
) -> None:
    await client.queues["q"].put("app.Job", {})
    token = await token_of(http)
    form = {"queue": "q", "csrf": token}
    for headers in (
        {"origin": "http://evil.example"},
        {"origin": "null"},
        {"origin": "http://dash.evil.example"},
        {"origin": "https://dash"},  # another scheme is another origin
        {"referer": "http://evil.example/page"},  # no Origin: the Referer decides
    ):
        refused = await http.post("/actions/queue_pause", data=form, headers={**headers, **JSON})
        assert refused.status_code == 403, headers
        assert "another site" in refused.json()["error"]
        assert not (await client.queues["q"].counts()).paused, headers
    for headers in (
        {"origin": "http://dash"},
        {"origin": "http://DASH:80"},
        {"referer": "http://dash/queues/q"},
        {"origin": "https://ops.example.com"},  # trusted: the proxy's address
        {},  # neither header: not a browser's form; the token decides
    ):
        await client.queues["q"].unpause()
        done = await http.post("/actions/queue_pause", data=form, headers={**headers, **JSON})
        assert done.status_code == 200, headers
        assert (await client.queues["q"].counts()).paused, headers
    entries = await audit.read(client, limit=20)
    refusals = [entry for entry in entries if entry.outcome != "ok"]
    assert len(refusals) == 5
    assert all(entry.outcome.startswith("refused: The request came from") for entry in refusals)
    assert "Origin http://evil.example" in refusals[-1].outcome
    assert refusals[-1].targets == ("q",)


def test_a_trusted_origin_must_be_an_origin(client: aqless.Client) -> None:
    for bad in ("ops.example.com", "https://ops.example.com/aqless", "ftp://ops", "https://"):
        with pytest.raises(ConfigurationError, match="trusted origin"):
            create_app(client, trusted_origins=[bad])


async def test_refused_requests_are_audited(client: aqless.Client) -> None:
    users = Users(["ann:open-sesame", "bob:b0b:read-only"])
    ann = {"authorization": "Basic " + base64.b64encode(b"ann:open-sesame").decode()}
    bob = {"authorization": "Basic " + base64.b64encode(b"bob:b0b").decode()}
    async with session(client, users=users) as http:
        token = await token_of(http, **ann)
        form = {"queue": "q", "csrf": token}
        by_viewer = await http.post("/actions/queue_pause", data=form, headers=bob)
        wrong_token = await http.post(
            "/actions/queue_pause", data={**form, "csrf": "0" * 64}, headers=ann
        )
        assert (by_viewer.status_code, wrong_token.status_code) == (403, 403)
    assert not (await client.queues["q"].counts()).paused
    csrf, viewer = await audit.read(client)
    assert (viewer.who, viewer.action, viewer.targets) == ("bob", "queue_pause", ("q",))
    assert viewer.outcome == "refused: You may not act on this dashboard."
    assert (csrf.who, csrf.action) == ("ann", "queue_pause")
    assert csrf.outcome.startswith("refused: The form has expired (CSRF token")
    async with session(client, read_only=True) as http:
        await http.post("/actions/config_set", data={"option": "heartbeat", "value": "1"})
    read_only = (await audit.read(client, limit=1))[0]
    assert read_only.outcome == "refused: This dashboard is read-only."
    assert read_only.targets == ("heartbeat",)


async def failed_jobs(client: aqless.Client, group: str, count: int) -> list[str]:
    queue = client.queues["reports"]
    for n in range(count):
        await queue.put("app.Export", {"n": n})
    jobs = await queue.pop_many(count)
    for job in jobs:
        await job.fail(group, "boom")
    return [job.jid for job in jobs]


async def test_bulk_actions_record_how_many_jobs_and_which(
    client: aqless.Client, http: httpx.AsyncClient
) -> None:
    timeouts = await failed_jobs(client, "smtp.Timeout", 3)
    token = await token_of(http)
    done = await http.post(
        "/actions/failed_group",
        data={"group": "smtp.Timeout", "action": "retry", "csrf": token},
        headers=JSON,
    )
    assert done.json()["ok"], done.text
    group = (await audit.read(client, limit=1))[0]
    assert (group.action, group.targets) == ("failed_group", ("smtp.Timeout",))
    assert group.detail["count"] == "3"
    assert sorted(group.detail["jids"].split(", ")) == sorted(timeouts)

    many = await failed_jobs(client, "ValueError", 103)
    done = await http.post("/actions/failed_retry_all", data={"csrf": token}, headers=JSON)
    assert done.json()["ok"], done.text
    every = (await audit.read(client, limit=1))[0]
    assert every.action == "failed_retry_all"
    assert every.detail["count"] == "103"
    listed, _, rest = every.detail["jids"].partition(" (")
    assert len(listed.split(", ")) == 100
    assert set(listed.split(", ")) <= set(many)
    assert rest == "and 3 more)"


async def test_edits_record_the_value_they_replaced(
    client: aqless.Client, http: httpx.AsyncClient
) -> None:
    jid = await client.queues["q"].put("app.Job", {}, priority=5)
    template = await client.queues["q"].recur("app.Report", {}, interval=60, retries=2)
    token = await token_of(http)
    for verb, form in (
        ("config_set", {"option": "heartbeat", "value": "90"}),
        ("config_set", {"option": "heartbeat", "value": "120"}),
        ("job_priority", {"jid": jid, "priority": "9"}),
        ("recurring_update", {"jid": template, "interval": "30", "priority": "1", "retries": "4"}),
        ("throttle_set", {"name": "api", "maximum": "3"}),
        ("throttle_set", {"name": "api", "maximum": "5"}),
    ):
        done = await http.post(f"/actions/{verb}", data={**form, "csrf": token}, headers=JSON)
        assert done.json()["ok"], (verb, done.text)
    throttle, first_throttle, recurring, priority, config, first_config = await audit.read(client)
    assert first_config.detail["previous"] == "60"  # the default heartbeat
    assert config.detail["previous"] == "90"
    assert priority.detail["previous"] == "5"
    assert recurring.detail["previous"] == "every 60 s, priority 0, retries 2, backlog 0"
    assert first_throttle.detail["previous"] == "maximum 0, ttl -2"
    assert throttle.detail["previous"] == "maximum 3, ttl -1"
