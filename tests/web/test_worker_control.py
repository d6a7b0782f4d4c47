"""The workers pages' quiet, resume and stop: an admin's request reaches a running aqless
worker within a second, the pages show its mode, a read-only user can neither see the
buttons nor post the action, and every request is audited."""

from __future__ import annotations

import anyio
import httpx

import aqless
from aqless.ops import audit
from aqless.web import create_app
from aqless.web.auth import Users
from tests.support.worker_processes import eventually
from tests.web.conftest import csrf_token
from tests.web.test_auth_audit import USERS, basic

ADMIN = basic("ann", "open-sesame")
VIEWER = basic("bob", "b0b")
WITHIN = 1.5  # seconds a request may take to reach the worker


async def test_an_admin_quiets_resumes_and_stops_a_worker_a_viewer_cannot(
    client: aqless.Client,
) -> None:
    worker = aqless.Worker(client, ["q"], interval=0.1)
    name = worker.name
    app = create_app(client, users=Users(USERS))
    async with (
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://dash") as http,
        anyio.create_task_group() as group,
    ):
        group.start_soon(worker.run)

        async def recorded() -> bool:
            return name in await client.workers.records()

        await eventually(recorded, 3, "its record")
        page = (await http.get("/workers", headers=ADMIN)).text
        assert 'action="/actions/worker_quiet"' in page
        assert 'action="/actions/worker_stop"' in page
        assert '<span class="badge mode-running">running</span>' in page
        viewing = (await http.get(f"/workers/{name}", headers=VIEWER)).text
        assert "/actions/" not in viewing
        assert "mode-running" in viewing
        form = {"worker": name, "csrf": csrf_token(page)}

        refused = await http.post("/actions/worker_stop", data=form, headers=VIEWER)
        assert refused.status_code == 403
        await anyio.sleep(WITHIN)
        assert worker.mode == "running"
        assert await client.redis.keys("ql:aqless:control:*") == []

        json = {**ADMIN, "accept": "application/json"}
        quiet = await http.post("/actions/worker_quiet", data=form, headers=json)
        assert quiet.json()["ok"] is True
        await eventually(lambda: worker.mode == "quiet", WITHIN, "quiet")

        async def shows_quiet() -> bool:
            shown = (await http.get("/api/workers", headers=ADMIN)).json()["workers"]
            return bool(shown[0]["info"]["mode"] == "quiet")

        await eventually(shows_quiet, 0.5, "the page says quiet")
        page = (await http.get(f"/workers/{name}", headers=ADMIN)).text
        assert '<span class="badge mode-quiet">quiet</span>' in page
        assert 'action="/actions/worker_resume"' in page
        assert 'action="/actions/worker_quiet"' not in page

        resumed = await http.post("/actions/worker_resume", data=form, headers=json)
        assert resumed.json() == {"ok": True, "message": f"{name} takes jobs again"}
        await eventually(lambda: worker.mode == "running", WITHIN, "running")
        stop = await http.post("/actions/worker_stop", data=form, headers=json)
        assert stop.json()["ok"] is True
        await eventually(lambda: worker.state == "stopped", WITHIN + 1, "stopped")

        unknown = await http.post(
            "/actions/worker_quiet", data={**form, "worker": "nobody"}, headers=json
        )
        assert unknown.status_code == 404
        assert "no aqless worker 'nobody'" in unknown.json()["message"]

    entries = [(entry.who, entry.action, entry.outcome) for entry in await audit.read(client)]
    assert entries[:4] == [
        ("ann", "worker_quiet", "no aqless worker 'nobody'"),
        ("ann", "worker_stop", "ok"),
        ("ann", "worker_resume", "ok"),
        ("ann", "worker_quiet", "ok"),
    ]
    assert entries[4][:2] == ("bob", "worker_stop")
    assert entries[4][2].startswith("refused")
