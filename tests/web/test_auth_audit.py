"""The dashboard's own users (basic auth, bearer tokens, admin and read-only roles) and the
audit log of its actions, in-process on both servers."""

from __future__ import annotations

import base64
from pathlib import Path
from urllib.parse import urlencode

import httpx
import pytest

import aqless
from aqless.errors import ConfigurationError
from aqless.ops import audit
from aqless.web import create_app
from aqless.web.auth import Users, parse_user, read_users
from tests.web.conftest import csrf_token

USERS = ["ann:open-sesame", "bob:b0b:read-only", "ops:pa:ss:word:admin"]


def basic(name: str, secret: str) -> dict[str, str]:
    token = base64.b64encode(f"{name}:{secret}".encode()).decode()
    return {"authorization": f"Basic {token}"}


def bearer(secret: str) -> dict[str, str]:
    return {"authorization": f"Bearer {secret}"}


def dashboard(client: aqless.Client, **options: object) -> httpx.AsyncClient:
    app = create_app(client, users=Users(USERS), **options)  # type: ignore[arg-type]
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://dash")


async def test_without_a_valid_credential_every_path_is_401_with_a_challenge(
    client: aqless.Client,
) -> None:
    async with dashboard(client) as http:
        for headers in (
            {},
            basic("ann", "wrong"),
            basic("bob", "open-sesame"),  # another user's secret
            basic("nobody", "open-sesame"),
            bearer("wrong"),
            {"authorization": "Basic !!!not-base64"},
            {"authorization": "Digest ann"},
        ):
            for path in ("/", "/api/overview", "/static/app.css", "/audit"):
                refused = await http.get(path, headers=headers)
                assert refused.status_code == 401, (path, headers)
                challenges = refused.headers.get_list("www-authenticate")
                assert 'Basic realm="aqless dashboard", charset="UTF-8"' in challenges
                assert 'Bearer realm="aqless dashboard"' in challenges
                assert refused.headers["content-security-policy"]
            posted = await http.post("/actions/queue_pause", data={"queue": "q"}, headers=headers)
            assert posted.status_code == 401
    assert not (await client.queues["q"].counts()).paused


async def test_admins_see_and_act_read_only_users_only_see(client: aqless.Client) -> None:
    jid = await client.queues["emails"].put("app.Send", {})
    async with dashboard(client) as http:
        for headers in (
            basic("ann", "open-sesame"),
            bearer("open-sesame"),
            basic("ops", "pa:ss:word"),
        ):
            page = await http.get(f"/jobs/{jid}", headers=headers)
            assert page.status_code == 200
            assert 'action="/actions/job_cancel"' in page.text
        viewer = basic("bob", "b0b")
        for headers in (viewer, bearer("b0b")):
            page = await http.get(f"/jobs/{jid}", headers=headers)
            assert page.status_code == 200
            assert "/actions/" not in page.text
            assert (await http.get("/api/overview", headers=headers)).status_code == 200
        token = csrf_token(
            (await http.get(f"/jobs/{jid}", headers=basic("ann", "open-sesame"))).text
        )
        form = {"jid": jid, "csrf": token}
        refused = await http.post("/actions/job_cancel", data=form, headers=viewer)
        assert refused.status_code == 403
        assert await client.jobs.get(jid) is not None
        done = await http.post(
            "/actions/job_cancel",
            data=form,
            headers={**bearer("open-sesame"), "accept": "application/json"},
        )
        assert done.json() == {"ok": True, "message": f"Cancelled {jid}"}
    assert await client.jobs.get(jid) is None


async def test_read_only_flag_still_wins_over_an_admin(client: aqless.Client) -> None:
    async with dashboard(client, read_only=True) as http:
        page = await http.get("/config", headers=basic("ann", "open-sesame"))
        assert "/actions/" not in page.text
        posted = await http.post(
            "/actions/queue_pause", data={"queue": "q"}, headers=basic("ann", "open-sesame")
        )
        assert posted.status_code == 403


def test_users_are_parsed_and_checked(tmp_path: Path) -> None:
    assert repr(parse_user("ann:secret")) == "Credential('ann', 'admin')"
    assert parse_user("bob:x:read-only").user.may_act is False
    assert "secret" not in repr(Users(["ann:secret"])._match("ann", "secret"))
    for bad in ("ann", "ann:", ":secret", "ann::read-only"):
        with pytest.raises(ConfigurationError) as raised:
            parse_user(bad)
        assert "secret" not in str(raised.value).replace("a secret", "")
    with pytest.raises(ConfigurationError, match="given twice: ann"):
        Users(["ann:a", "ann:b"])
    with pytest.raises(ConfigurationError, match="same secret"):
        Users(["ann:a", "bob:a"])
    path = tmp_path / "users"
    path.write_text("# the dashboard's users\nann:one\n\n  bob:two:read-only\n")
    assert [(c.user.name, c.user.role) for c in read_users(path)] == [
        ("ann", "admin"),
        ("bob", "read-only"),
    ]
    with pytest.raises(ConfigurationError, match="cannot read"):
        read_users(path.with_name("missing"))


async def test_actions_are_audited_with_the_user_and_their_targets(client: aqless.Client) -> None:
    jids = [await client.queues["emails"].put("app.Send", {}) for _ in range(2)]
    async with dashboard(client) as http:
        ann = basic("ann", "open-sesame")
        token = csrf_token((await http.get("/queues/emails", headers=ann)).text)
        json = {"accept": "application/json"}
        await http.post(
            "/actions/queue_pause", data={"queue": "emails", "csrf": token}, headers={**ann, **json}
        )
        await http.post(
            "/actions/jobs_bulk",
            content=urlencode(
                [
                    ("action", "cancel"),
                    ("jid", jids[0]),
                    ("jid", jids[1]),
                    ("csrf", token),
                    ("next", "/"),
                ]
            ),
            headers={**ann, **json, "content-type": "application/x-www-form-urlencoded"},
        )
        await http.post(
            "/actions/job_priority",
            data={"jid": "gone", "priority": "3", "csrf": token},
            headers={**ann, **json},
        )
        bob = basic("bob", "b0b")
        await http.post(
            "/actions/queue_unpause", data={"queue": "emails", "csrf": token}, headers=bob
        )
        refused, priority, bulk, pause = await audit.read(client)
        assert (refused.who, refused.outcome) == (
            "bob",
            "refused: You may not act on this dashboard.",
        )
        assert (pause.who, pause.via, pause.action, pause.targets) == (
            "ann",
            "web",
            "queue_pause",
            ("emails",),
        )
        assert pause.outcome == "ok"
        assert (bulk.action, bulk.targets, dict(bulk.detail)) == (
            "jobs_bulk",
            tuple(jids),
            {"action": "cancel", "count": "2", "jids": ", ".join(jids)},
        )
        assert priority.outcome == "no job 'gone'"
        assert dict(priority.detail) == {"priority": "3"}
        listing = (await http.get("/api/audit", headers=bob)).json()
        assert [entry["action"] for entry in listing["entries"]] == [
            "queue_unpause",
            "job_priority",
            "jobs_bulk",
            "queue_pause",
        ]
        page = await http.get("/audit", headers=bob)
        assert page.text.count('<td class="who">ann</td>') == 3


async def test_the_log_is_bounded_and_escaped(client: aqless.Client) -> None:
    app = create_app(client, audit_length=2)
    payload = "<script>alert(1)</script>"
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://dash"
    ) as http:
        token = csrf_token((await http.get("/config")).text)
        for value in ("1", "2", payload):
            await http.post(
                "/actions/config_set", data={"option": "x", "value": value, "csrf": token}
            )
        assert await client.redis.llen("ql:aqless:audit") == 2
        page = (await http.get("/audit")).text
        assert payload not in page
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
        assert "anonymous (" in page
    with pytest.raises(ConfigurationError):
        create_app(client, audit_length=0)
