"""The dashboard's recurring pages with cron schedules: expression, zone and next runs,
escaped."""

from __future__ import annotations

import httpx

import aqless
from aqless.web import create_app
from tests.web.conftest import csrf_token

PAYLOAD = "<script>window.__pwned=1</script>"


async def test_a_cron_job_shows_its_schedule_and_next_runs(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    queue = client.queues["reports"]
    await queue.recur("app.Nightly", cron="30 2 * * *", tz="Europe/Paris", jid="nightly")
    api = (await app_client.get("/api/jobs/nightly")).json()
    assert (api["job"]["cron"], api["job"]["tz"]) == ("30 2 * * *", "Europe/Paris")
    assert len(api["next_runs"]) == 5
    assert all("02:30:00+0" in run or "03:00:00+02" in run for run in api["next_runs"])
    page = (await app_client.get("/jobs/nightly")).text
    assert "<code>30 2 * * *</code>" in page
    assert api["next_runs"][0] in page
    listing = (await app_client.get("/recurring")).text
    assert "<code>30 2 * * *</code>" in listing
    assert 'name="interval"' not in listing  # a cron job's interval is no setting


async def test_fields_another_client_wrote_are_escaped(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    await client.queues["q"].recur("app.Job", cron="0 * * * *", jid="odd")
    await client.redis.hset(f"{client.prefix}r:odd", mapping={"cron": PAYLOAD, "tz": PAYLOAD})
    for path in ("/jobs/odd", "/recurring"):
        page = await app_client.get(path)
        assert page.status_code == 200
        assert PAYLOAD not in page.text
        assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in page.text


async def edit(app_client: httpx.AsyncClient, fields: dict[str, str]) -> httpx.Response:
    token = csrf_token((await app_client.get("/jobs/nightly")).text)
    form = {"jid": "nightly", "priority": "0", "retries": "5", "csrf": token, **fields}
    return await app_client.post(
        "/actions/recurring_update", data=form, headers={"accept": "application/json"}
    )


async def test_a_cron_expression_is_edited_in_place(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    await client.queues["reports"].recur("app.Nightly", cron="30 2 * * *", jid="nightly")
    page = (await app_client.get("/jobs/nightly")).text
    assert 'name="cron" required value="30 2 * * *"' in page
    done = await edit(app_client, {"cron": "15 4 * * 1-5", "tz": "Europe/Paris"})
    assert done.json() == {
        "ok": True,
        "message": "Updated nightly: cron 15 4 * * 1-5 (Europe/Paris)",
    }
    template = await client.jobs.get("nightly")
    assert isinstance(template, aqless.RecurringJob)
    assert (template.cron, template.tz) == ("15 4 * * 1-5", "Europe/Paris")
    api = (await app_client.get("/api/jobs/nightly")).json()
    assert all("04:15:00+0" in run for run in api["next_runs"])


async def test_a_bad_cron_expression_is_refused_clearly_and_changes_nothing(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    await client.queues["reports"].recur("app.Nightly", cron="30 2 * * *", jid="nightly")
    for fields, said in (
        ({"cron": "61 * * * *"}, "bad cron '61 * * * *': Bad minute"),
        ({"cron": "* * *"}, "Wrong number of fields"),
        ({"cron": "0 * * * *", "tz": "Mars/Base"}, "unknown time zone 'Mars/Base'"),
        ({"cron": PAYLOAD}, "bad cron"),
    ):
        refused = await edit(app_client, {**fields, "priority": "9"})
        assert refused.status_code == 400
        assert refused.json()["message"].startswith("The schedule is unchanged: ")
        assert said in refused.json()["message"]
    template = await client.jobs.get("nightly")
    assert isinstance(template, aqless.RecurringJob)
    assert (template.cron, template.tz, template.priority) == ("30 2 * * *", "UTC", 0)


async def test_a_bad_cron_expression_is_flashed_escaped(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    await client.queues["reports"].recur("app.Nightly", cron="30 2 * * *", jid="nightly")
    token = csrf_token((await app_client.get("/jobs/nightly")).text)
    form = {"jid": "nightly", "priority": "0", "retries": "5", "csrf": token, "cron": PAYLOAD}
    refused = await app_client.post(
        "/actions/recurring_update", data=form, headers={"referer": "http://dash/jobs/nightly"}
    )
    assert refused.status_code == 303
    page = (await app_client.get(refused.headers["location"])).text
    assert 'class="flash flash-error"' in page
    assert "The schedule is unchanged: bad cron" in page
    assert PAYLOAD not in page


async def test_a_read_only_dashboard_offers_no_cron_edit(client: aqless.Client) -> None:
    await client.queues["reports"].recur("app.Nightly", cron="30 2 * * *", jid="nightly")
    app = create_app(client, read_only=True)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://d") as ro:
        page = (await ro.get("/jobs/nightly")).text
        assert 'name="cron"' not in page
        refused = await ro.post(
            "/actions/recurring_update", data={"jid": "nightly", "cron": "* * * * *"}
        )
        assert refused.status_code == 403
    template = await client.jobs.get("nightly")
    assert isinstance(template, aqless.RecurringJob)
    assert template.cron == "30 2 * * *"


async def test_a_refused_edit_shows_what_was_typed_escaped(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    await client.queues["reports"].recur("app.Nightly", cron="30 2 * * *", jid="nightly")
    token = csrf_token((await app_client.get("/jobs/nightly")).text)
    typed = '61 * * * *"><b>'
    form = {"jid": "nightly", "priority": "4", "retries": "7", "csrf": token}
    refused = await app_client.post(
        "/actions/recurring_update",
        data={**form, "cron": typed, "tz": "Europe/Paris", "backlog": "2"},
        headers={"referer": "http://dash/jobs/nightly"},
    )
    assert refused.status_code == 303
    page = (await app_client.get(refused.headers["location"])).text
    assert 'name="cron" required value="61 * * * *&#34;&gt;&lt;b&gt;"' in page
    assert 'name="tz" value="Europe/Paris"' in page
    assert 'name="priority" step="any" value="4"' in page
    assert 'name="backlog" min="0" value="2"' in page
    assert typed not in page
    again = (await app_client.get("/jobs/nightly")).text  # shown once: then the template's own
    assert 'name="cron" required value="30 2 * * *"' in again


async def test_a_refused_form_too_long_to_keep_is_shown_with_the_stored_values(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    await client.queues["reports"].recur("app.Nightly", cron="30 2 * * *", jid="nightly")
    token = csrf_token((await app_client.get("/jobs/nightly")).text)
    typed = '"' * 900  # 1,800 characters as JSON, 5,400 once quoted: more than a cookie holds
    refused = await app_client.post(
        "/actions/recurring_update",
        data={"jid": "nightly", "priority": "0", "retries": "5", "csrf": token, "cron": typed},
        headers={"referer": "http://dash/jobs/nightly"},
    )
    assert all(len(value) < 4000 for value in refused.headers.get_list("set-cookie"))
    page = (await app_client.get(refused.headers["location"])).text
    assert "The schedule is unchanged" in page
    assert 'name="cron" required value="30 2 * * *"' in page


async def act(app_client: httpx.AsyncClient, verb: str, fields: dict[str, str]) -> httpx.Response:
    token = csrf_token((await app_client.get("/jobs/nightly")).text)
    return await app_client.post(
        f"/actions/{verb}",
        data={"jid": "nightly", "csrf": token, **fields},
        headers={"accept": "application/json"},
    )


async def test_the_policy_is_shown_and_edited_on_the_recurring_page(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    await client.queues["reports"].recur("app.Nightly", interval=3600, jid="nightly")
    page = (await app_client.get("/jobs/nightly")).text
    assert '<select name="overlap"' in page
    assert "<option selected>allow_all</option>" in page
    fields = {"priority": "0", "retries": "5", "overlap": "skip", "catchup": "600"}
    done = await act(app_client, "recurring_update", fields | {"pause_after": "3"})
    assert done.json()["ok"] is True
    api = (await app_client.get("/api/jobs/nightly")).json()["job"]
    assert (api["overlap"], api["catchup"], api["pause_after"], api["jitter"]) == (
        "skip",
        600,
        3,
        0,
    )
    assert "<option selected>skip</option>" in (await app_client.get("/jobs/nightly")).text
    refused = await act(app_client, "recurring_update", fields | {"overlap": "sometimes"})
    assert refused.status_code == 400
    assert "overlap" in refused.json()["message"]


async def test_pause_resume_and_backfill_from_the_recurring_page(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    await client.queues["reports"].recur("app.Nightly", cron="0 * * * *", jid="nightly")
    assert (await act(app_client, "recurring_pause", {})).json()["ok"] is True
    page = (await app_client.get("/jobs/nightly")).text
    assert "Resume" in page
    assert (await app_client.get("/api/jobs/nightly")).json()["job"]["paused"] is True
    assert (await act(app_client, "recurring_resume", {})).json()["ok"] is True
    assert (await app_client.get("/api/jobs/nightly")).json()["job"]["paused"] is False
    span = {"start": "2026-01-05T00:00", "end": "2026-01-06T00:00"}
    done = await act(app_client, "recurring_backfill", span)
    assert done.json() == {"ok": True, "message": "Backfilled nightly: 24 runs made"}
    again = await act(app_client, "recurring_backfill", span)
    assert again.json()["message"] == "Backfilled nightly: 0 runs made"
    bad = await act(app_client, "recurring_backfill", {"start": "soon", "end": "later"})
    assert bad.status_code == 400
    assert await client.queues["reports"].length() == 24


async def test_the_recurring_list_says_which_templates_are_paused_or_guarded(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    queue = client.queues["reports"]
    await queue.recur("app.Nightly", interval=60, name="guarded", overlap="skip")
    await queue.recur("app.Nightly", interval=60, name="plain")
    listing = (await app_client.get("/recurring")).text
    assert '<span class="muted" title="overlap">skip</span>' in listing
    assert "paused</span>" not in listing
    template = await client.jobs.get("plain")
    assert isinstance(template, aqless.RecurringJob)
    await template.pause()
    assert '<span class="muted">paused</span>' in (await app_client.get("/recurring")).text
