"""The dashboard's recurring pages with cron schedules: expression, zone and next runs,
escaped."""

from __future__ import annotations

import httpx

import aqless

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
