"""`aqless recurring` with cron schedules: the expression, its zone and the next runs."""

from __future__ import annotations

import aqless
from tests.support.cli import Cli
from tests.support.clients import get_recurring

pytest_plugins = ["tests.support.client_fixtures"]


async def test_cron_jobs_show_their_next_runs(client: aqless.Client, run_cli: Cli) -> None:
    await client.queues["a"].recur("app.Nightly", cron="30 2 * * *", tz="Europe/Paris", jid="n")
    listing = await run_cli("recurring", "list")
    assert "30 2 * * * (Europe/Paris)" in listing.stdout
    shown = await run_cli("--json", "recurring", "show", "n")
    document = shown.json()
    assert (document["cron"], document["tz"]) == ("30 2 * * *", "Europe/Paris")
    assert len(document["next_runs"]) == 5
    assert all(run.endswith(("+01:00", "+02:00")) for run in document["next_runs"])
    assert "02:30:00+0" in (await run_cli("recurring", "show", "n")).stdout
    changed = await run_cli("recurring", "update", "n", "--cron", "0 6 * * 1", "--tz", "UTC")
    assert changed.code == 0
    job = await get_recurring(client, "n")
    assert (job.cron, job.tz) == ("0 6 * * 1", "UTC")
    assert {run.weekday() for run in await job.next_runs(3)} == {0}
    refused = await run_cli("recurring", "update", "n", "--cron", "nonsense")
    assert refused.code != 0
    assert "bad cron" in refused.stderr


async def test_the_policy_backfill_pause_and_resume(client: aqless.Client, run_cli: Cli) -> None:
    await client.queues["a"].recur("app.Hourly", cron="0 * * * *", jid="h")
    changed = await run_cli(
        "recurring", "update", "h", "--overlap", "buffer_one", "--pause-after", "2"
    )
    assert changed.code == 0
    job = await get_recurring(client, "h")
    assert (job.overlap, job.pause_after) == ("buffer_one", 2)
    shown = (await run_cli("recurring", "show", "h")).stdout
    assert "buffer_one" in shown
    assert "2 failures" in shown
    refused = await run_cli("recurring", "update", "h", "--overlap", "sometimes")
    assert refused.code == 2
    assert "overlap" in refused.stderr
    made = await run_cli("--json", "recurring", "backfill", "h", "2026-01-05", "2026-01-05T12:00")
    assert made.json() == {"backfilled": "h", "runs": 12}
    again = await run_cli("recurring", "backfill", "h", "2026-01-05", "2026-01-06")
    assert "made 12 runs of h" in again.stdout  # the first 12 were made before
    bad = await run_cli("recurring", "backfill", "h", "yesterday", "2026-01-06")
    assert bad.code == 2
    assert (await run_cli("recurring", "pause", "h")).code == 0
    assert (await get_recurring(client, "h")).paused
    assert (await run_cli("recurring", "resume", "h")).code == 0
    assert not (await get_recurring(client, "h")).paused
