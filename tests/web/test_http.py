"""The dashboard over HTTP, in-process on both servers: the JSON API, CSRF, read-only mode,
the auth hook, escaping, security headers and mounting under a prefix."""

from __future__ import annotations

import platform
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
from aqless import scripts
from aqless.web import create_app
from aqless.web.security import Permission
from tests.web.conftest import csrf_token
from tests.web.data import put_as_another_client

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
    for path in ("/failed", "/tracked", "/workers", "/recurring", "/throttles", "/config",
                 "/patterns", "/about"):  # fmt: skip
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
    jid = await put_as_another_client(client, PAYLOAD, PAYLOAD, {"html": PAYLOAD}, [PAYLOAD])
    queue = client.queues[PAYLOAD]
    job = await queue.pop(worker=PAYLOAD)
    assert job is not None
    await job.fail(PAYLOAD, PAYLOAD)
    await client.queue_patterns.set_identifiers({PAYLOAD: [PAYLOAD]})
    await client.queue_patterns.set_priorities([aqless.PriorityPattern((PAYLOAD,))])
    pages = ("/", f"/jobs/{jid}", "/failed", f"/workers/{PAYLOAD}", "/tags?tag=" + PAYLOAD)
    for path in (*pages, "/patterns"):
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


async def test_the_about_page(client: aqless.Client, app_client: httpx.AsyncClient) -> None:
    info = await client.redis.info("server")
    about = (await app_client.get("/api/about")).json()
    assert about["aqless"] == aqless.__version__
    if "valkey_version" in info:
        assert about["server"] == {"name": "valkey", "version": info["valkey_version"]}
    else:
        assert about["server"] == {"name": "redis", "version": info["redis_version"]}
    assert about["script"] == {
        "sha1": scripts.sha1(),
        "function": scripts.function_name(),
        "calls": "FCALL",  # both test servers have functions
    }
    assert about["python"]["version"] == platform.python_version()
    page = (await app_client.get("/about")).text
    for shown in (aqless.__version__, about["server"]["version"], scripts.function_name()):
        assert shown in page


async def test_the_about_page_escapes_the_namespace(server_url: str) -> None:
    async with (
        aqless.Client(server_url, namespace=PAYLOAD) as client,
        http(create_app(client)) as dash,
    ):
        page = (await dash.get("/about")).text
    assert "<script>window" not in page
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in page


async def test_patterns_are_seen_and_edited(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    token = csrf_token((await app_client.get("/patterns")).text)

    async def post(verb: str, **form: str) -> httpx.Response:
        return await app_client.post(f"/actions/{verb}", data={**form, "csrf": token})

    done = await post("identifier_set", name="mail", patterns="mail-*, !mail-spam")
    assert done.status_code == 303
    await post("identifier_set", name="web", patterns="web")
    assert await client.queue_patterns.identifiers() == {
        "mail": ["mail-*", "!mail-spam"],
        "web": ["web"],
        "default": ["*"],
    }
    await post("identifier_unset", name="web")
    assert "web" not in await client.queue_patterns.identifiers()
    await post("priorities_set", groups="urgent-*,alerts\r\n\r\nfairly:bulk-*\r\n")
    assert await client.queue_patterns.priorities() == [
        aqless.PriorityPattern(("urgent-*", "alerts")),
        aqless.PriorityPattern(("bulk-*",), fairly=True),
        aqless.PriorityPattern(("default",)),
    ]
    shown = (await app_client.get("/api/patterns")).json()
    assert shown["identifiers"]["mail"] == ["mail-*", "!mail-spam"]
    assert [group["text"] for group in shown["priorities"]] == [
        "urgent-*,alerts",
        "fairly:bulk-*",
        "default",
    ]
    page = (await app_client.get("/patterns")).text
    assert "fairly:bulk-*\n" in page  # the textarea holds the order as it is written
    assert 'value="mail-* !mail-spam"' in page
    assert (await post("priorities_set", groups="")).status_code == 303
    assert await client.queue_patterns.priorities() == [aqless.PriorityPattern(("default",))]
    headers = {"accept": "application/json", "x-aqless-csrf": token}
    refused = await app_client.post(
        "/actions/identifier_unset", data={"name": "nope"}, headers=headers
    )
    assert (refused.status_code, refused.json()["ok"]) == (400, False)
    refused = await app_client.post(
        "/actions/priorities_set", data={"groups": "fairly:"}, headers=headers
    )
    assert refused.status_code == 400


async def test_every_failure_group_is_retried_at_once(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    for queue, group in (("q", "Flaky"), ("q", "Flaky"), ("other", "Boom")):
        await client.queues[queue].put("app.Job", {})
        job = await client.queues[queue].pop()
        assert job is not None
        await job.fail(group, "failed")
    page = (await app_client.get("/failed")).text
    assert 'data-confirm="Retry all 3 failed jobs of every group?"' in page
    token = csrf_token(page)
    headers = {"accept": "application/json", "x-aqless-csrf": token}
    done = await app_client.post("/actions/failed_retry_all", headers=headers)
    assert done.json() == {"ok": True, "message": "Retried 3 jobs of 2 groups"}
    assert await client.jobs.failure_groups() == {}
    assert (await client.queues["q"].length(), await client.queues["other"].length()) == (2, 1)
    nothing = await app_client.post("/actions/failed_retry_all", headers=headers)
    assert nothing.json() == {"ok": False, "message": "no failed jobs"}


async def test_a_read_only_app_offers_no_pattern_edit_and_no_retry_of_every_group(
    client: aqless.Client,
) -> None:
    await client.queues["q"].put("app.Job", {})
    job = await client.queues["q"].pop()
    assert job is not None
    await job.fail("Boom", "failed")
    app = create_app(client, read_only=True, secret="test-key")  # noqa: S106 -- a test key
    async with http(app) as dash:
        for path in ("/patterns", "/failed"):
            page = await dash.get(path)
            assert page.status_code == 200
            assert 'method="post"' not in page.text, path
        token = app.state.dashboard.csrf.token(dash.cookies["aqless_csrf"])
        for verb, form in (
            ("identifier_set", {"name": "x", "patterns": "y"}),
            ("priorities_set", {"groups": "y"}),
            ("failed_retry_all", {}),
        ):
            refused = await dash.post(f"/actions/{verb}", data={**form, "csrf": token})
            assert refused.status_code == 403
    assert "x" not in await client.queue_patterns.identifiers()
    assert await client.jobs.failure_groups() == {"Boom": 1}


async def test_the_job_page_shows_its_dedup_id_escaped(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    jid = await client.queues["orders"].put("app.Ship", dedup=PAYLOAD)
    body = (await app_client.get(f"/jobs/{jid}")).text
    assert "Dedup id" in body
    assert "<script>window" not in body
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in body
    assert (await app_client.get(f"/api/jobs/{jid}")).json()["job"]["dedup"] == PAYLOAD
    plain = await client.queues["orders"].put("app.Ship")
    assert "Dedup id" not in (await app_client.get(f"/jobs/{plain}")).text
