"""The dashboard over HTTP, in-process on both servers: the JSON API, CSRF, read-only mode,
the auth hook, escaping, security headers and mounting under a prefix."""

from __future__ import annotations

import re

import httpx
import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Mount

import aqless
from aqless.web import create_app
from aqless.web.security import Permission
from tests.web.conftest import csrf_token

PAYLOAD = '<script>window.__pwned=1</script><img src=x onerror="alert(1)">'


def http(app: Starlette, base: str = "http://dash") -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=base)


async def test_every_page_has_a_json_twin(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    jid = await client.queues["emails"].put("app.Send", {"to": "a"}, tags=["vip"])
    overview = (await app_client.get("/api/overview")).json()
    assert [(q["name"], q["waiting"]) for q in overview["queues"]] == [("emails", 1)]
    queue = (await app_client.get("/api/queues/emails")).json()
    assert [job["jid"] for job in queue["jobs"]] == [jid]
    assert len(queue["days"]) == 14
    job = (await app_client.get(f"/api/jobs/{jid}")).json()
    assert (job["kind"], job["job"]["data"], job["job"]["tags"]) == ("job", {"to": "a"}, ["vip"])
    tagged = (await app_client.get("/api/tags", params={"tag": "vip"})).json()
    assert [job["jid"] for job in tagged["jobs"]] == [jid]
    missing = await app_client.get("/api/jobs/nope")
    assert missing.status_code == 404
    for path in ("/failed", "/tracked", "/workers", "/recurring", "/throttles", "/config"):
        response = await app_client.get("/api" + path)
        assert response.status_code == 200, path
        assert isinstance(response.json(), dict), path


async def test_a_post_without_the_csrf_token_changes_nothing(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    jid = await client.queues["emails"].put("app.Send", {})
    token = csrf_token((await app_client.get(f"/jobs/{jid}")).text)
    for form in ({"jid": jid}, {"jid": jid, "csrf": "0" * 64}, {"jid": jid, "csrf": ""}):
        refused = await app_client.post("/actions/job_cancel", data=form)
        assert refused.status_code == 403
        assert "CSRF" in refused.text
    app_client.cookies.clear()  # the right token, but not the cookie it belongs to
    refused = await app_client.post("/actions/job_cancel", data={"jid": jid, "csrf": token})
    assert refused.status_code == 403
    assert await client.jobs.get(jid) is not None

    token = csrf_token((await app_client.get(f"/jobs/{jid}")).text)
    done = await app_client.post("/actions/job_cancel", data={"jid": jid, "csrf": token})
    assert done.status_code == 303
    assert await client.jobs.get(jid) is None


async def test_a_json_client_acts_with_the_header_token(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    jid = await client.queues["emails"].put("app.Send", {})
    token = csrf_token((await app_client.get("/config")).text)
    headers = {"accept": "application/json", "x-aqless-csrf": token}
    done = await app_client.post(
        "/actions/job_priority", data={"jid": jid, "priority": "9"}, headers=headers
    )
    assert done.json() == {"ok": True, "message": f"Priority of {jid} is 9"}
    bad = await app_client.post(
        "/actions/job_priority", data={"jid": jid, "priority": "x"}, headers=headers
    )
    assert (bad.status_code, bad.json()["ok"]) == (400, False)
    job = await client.jobs.get(jid)
    assert job is not None
    assert job.priority == 9


async def test_a_read_only_app_offers_no_action_and_refuses_every_post(
    client: aqless.Client,
) -> None:
    jid = await client.queues["emails"].put("app.Send", {})
    app = create_app(client, read_only=True, secret="test-key")  # noqa: S106 -- a test key
    async with http(app) as dash:
        page = await dash.get(f"/jobs/{jid}")
        assert page.status_code == 200
        assert 'method="post"' not in page.text
        assert "read-only" in page.text
        nonce = dash.cookies["aqless_csrf"]
        token = app.state.dashboard.csrf.token(nonce)  # a valid token, all the same
        for verb, form in (("job_cancel", {"jid": jid}), ("queue_pause", {"queue": "emails"})):
            refused = await dash.post(f"/actions/{verb}", data={**form, "csrf": token})
            assert refused.status_code == 403
    assert await client.jobs.get(jid) is not None
    assert not (await client.queues["emails"].counts()).paused


async def test_the_auth_check_decides_who_sees_and_who_acts(client: aqless.Client) -> None:
    jid = await client.queues["emails"].put("app.Send", {})

    async def auth(request: Request, permission: Permission) -> bool:
        user = request.headers.get("x-user")
        return user == "admin" or (user == "viewer" and permission == "view")

    async with http(create_app(client, auth=auth)) as dash:
        assert (await dash.get("/")).status_code == 403
        assert (await dash.get("/api/overview")).status_code == 403
        assert (await dash.get("/events")).status_code == 403
        viewer = await dash.get(f"/jobs/{jid}", headers={"x-user": "viewer"})
        assert viewer.status_code == 200
        assert 'method="post"' not in viewer.text
        admin = await dash.get(f"/jobs/{jid}", headers={"x-user": "admin"})
        token = csrf_token(admin.text)
        form = {"jid": jid, "csrf": token}
        refused = await dash.post("/actions/job_cancel", data=form, headers={"x-user": "viewer"})
        assert refused.status_code == 403
        assert await client.jobs.get(jid) is not None
        done = await dash.post("/actions/job_cancel", data=form, headers={"x-user": "admin"})
        assert done.status_code == 303
        assert await client.jobs.get(jid) is None


class RequireKey(BaseHTTPMiddleware):
    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        if request.headers.get("x-key") != "secret":
            return PlainTextResponse("who are you?", status_code=401)
        return await call_next(request)


async def test_auth_can_be_the_host_middleware(client: aqless.Client) -> None:
    async with http(create_app(client, auth=Middleware(RequireKey))) as dash:
        refused = await dash.get("/")
        assert refused.status_code == 401
        assert "content-security-policy" in refused.headers  # the dashboard's headers still
        assert (await dash.get("/", headers={"x-key": "secret"})).status_code == 200


async def test_everything_shown_is_escaped(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    queue = client.queues[PAYLOAD]
    jid = await queue.put(PAYLOAD, {"html": PAYLOAD}, tags=[PAYLOAD])
    job = await queue.pop(worker=PAYLOAD)
    assert job is not None
    await job.fail(PAYLOAD, PAYLOAD)
    for path in ("/", f"/jobs/{jid}", "/failed", f"/workers/{PAYLOAD}", "/tags?tag=" + PAYLOAD):
        body = (await app_client.get(path)).text
        assert "<script>window" not in body, path
        assert "<img src=x" not in body, path
        assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in body, path
    response = await app_client.get("/")
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy
    assert "unsafe-inline" not in policy
    assert response.headers["x-frame-options"] == "DENY"


async def test_no_redirect_leaves_the_dashboard(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    token = csrf_token((await app_client.get("/config")).text)
    for target in ("//evil.example/", "https://evil.example/", "/\\evil.example"):
        form = {"option": "heartbeat", "value": "61", "csrf": token, "next": target}
        response = await app_client.post("/actions/config_set", data=form)
        assert response.headers["location"] == "/"
    assert await client.config.get("heartbeat") == "61"


async def test_mounted_under_a_prefix(client: aqless.Client) -> None:
    jid = await client.queues["a/b?c#d"].put("app.Send", {})
    host = Starlette(routes=[Mount("/ops/aqless", app=create_app(client))])
    async with http(host) as dash:
        overview = await dash.get("/ops/aqless/")
        assert overview.status_code == 200
        links = set(re.findall(r'(?:href|action|src|data-events)="([^"]+)"', overview.text))
        assert links
        assert all(link.startswith("/ops/aqless/") for link in links), links
        assert "/ops/aqless/queues/a%2Fb%3Fc%23d" in links
        queue = await dash.get("/ops/aqless/queues/a%2Fb%3Fc%23d")
        assert jid in queue.text
        assert (await dash.get("/ops/aqless/static/app.js")).status_code == 200
        token = csrf_token(queue.text)
        assert dash.cookies.jar
        assert all(cookie.path == "/ops/aqless" for cookie in dash.cookies.jar)
        form = {"queue": "a/b?c#d", "csrf": token, "next": "/ops/aqless/queues/a%2Fb%3Fc%23d"}
        done = await dash.post("/ops/aqless/actions/queue_pause", data=form)
        assert done.headers["location"] == "/ops/aqless/queues/a%2Fb%3Fc%23d"
    assert (await client.queues["a/b?c#d"].counts()).paused


async def test_a_missing_job_is_a_404_page(app_client: httpx.AsyncClient) -> None:
    response = await app_client.get("/jobs/no-such-job")
    assert response.status_code == 404
    assert "no-such-job" in response.text


@pytest.mark.parametrize("verb", ["nope", "job_cancel"])
async def test_unknown_verbs_and_bad_input_change_nothing(
    client: aqless.Client, app_client: httpx.AsyncClient, verb: str
) -> None:
    jid = await client.queues["emails"].put("app.Send", {})
    token = csrf_token((await app_client.get("/config")).text)
    response = await app_client.post(
        f"/actions/{verb}", data={"csrf": token}, headers={"accept": "application/json"}
    )
    assert response.status_code in (400, 404)
    assert await client.jobs.get(jid) is not None
