"""put, get, priority, tag/untag, track/untrack: tables, --json, and their effect."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import cast

import pytest

import aqless
from tests.support.cli import Cli
from tests.support.clients import get_job, get_recurring, pop_one

pytest_plugins = ["tests.support.client_fixtures"]


async def test_put_stores_the_job_with_every_option(client: aqless.Client, run_cli: Cli) -> None:
    first = await client.queues["q"].put("app.First", {})
    outcome = await run_cli(
        "put", "q", "app.Send", '{"to": "ann", "n": [1, 2]}',
        "--priority", "7", "--tags", "vip,red", "--tags", "blue", "--retries", "2",
        "--depends", first, "--throttles", "smtp", "--jid", "j-1",
    )  # fmt: skip
    assert (outcome.code, outcome.stdout.strip()) == (0, "j-1")
    job = await get_job(client, "j-1")
    assert (job.klass_name, job.data, job.priority) == ("app.Send", {"to": "ann", "n": [1, 2]}, 7)
    assert (job.tags, job.original_retries, job.dependencies) == (
        ("vip", "red", "blue"),
        2,
        (first,),
    )
    assert job.state == "depends"
    assert "smtp" in job.throttles


async def test_put_with_a_delay_schedules_and_json_names_the_jid(
    client: aqless.Client, run_cli: Cli
) -> None:
    document = (await run_cli("--json", "put", "q", "app.Later", "--delay", "60")).json()
    assert document["queue"] == "q"
    assert len(document["jids"]) == 1
    assert (await get_job(client, document["jids"][0])).state == "scheduled"


async def test_put_at_a_time_schedules_it_for_that_moment(
    client: aqless.Client, run_cli: Cli, tmp_path: Path
) -> None:
    hour_ahead = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    hour_ahead += datetime.timedelta(hours=1)
    at = hour_ahead.astimezone(datetime.timezone(datetime.timedelta(hours=-5))).isoformat()
    (jid,) = (await run_cli("--json", "put", "q", "app.Later", "--at", at)).json()["jids"]
    lines = tmp_path / "jobs.jsonl"
    lines.write_text(
        json.dumps({"jid": "iso", "at": at})
        + "\n"
        + json.dumps({"jid": "unix", "at": hour_ahead.timestamp() + 60})
        + "\n"
        + json.dumps({"jid": "own-delay", "delay": 0})
        + "\n"
    )
    outcome = await run_cli("put", "q", "app.Later", "--file", str(lines), "--at", at)
    assert outcome.code == 0
    entries = await client.redis.zrange("ql:q:q-scheduled", 0, -1, withscores=True)
    scheduled = dict(cast(list[tuple[str, float]], entries))
    expected = {jid: hour_ahead, "iso": hour_ahead}
    expected["unix"] = hour_ahead + datetime.timedelta(seconds=60)
    assert scheduled.keys() == expected.keys()
    for name, moment in expected.items():
        assert scheduled[name] == pytest.approx(moment.timestamp(), abs=1)
    assert (await get_job(client, "own-delay")).state == "waiting"


async def test_put_at_refuses_a_naive_time_and_a_delay_beside_it(
    client: aqless.Client, run_cli: Cli
) -> None:
    naive = await run_cli("put", "q", "app.Later", "--at", "2030-01-01T09:00:00")
    assert naive.code == 2
    assert "no UTC offset, so its moment is unknown" in naive.stderr
    both = await run_cli("put", "q", "app.Later", "--at", "2030-01-01T09:00Z", "--delay", "5")
    assert both.code == 2
    assert "--delay or --at, not both" in both.stderr
    naive_line = await run_cli(
        "put", "q", "app.Later", "--file", "-", input='{"at": "2030-01-01T09:00"}\n'
    )
    assert naive_line.code == 2
    assert "line 1: at:" in naive_line.stderr
    assert await client.queues.names() == []


async def test_put_refuses_bad_json_and_a_missing_class(
    client: aqless.Client, run_cli: Cli
) -> None:
    bad = await run_cli("put", "q", "app.Send", "{not json")
    assert bad.code == 2
    assert "not JSON" in bad.stderr
    assert bad.stdout == ""
    missing = await run_cli("put", "q")
    assert missing.code == 2
    assert "KLASS" in missing.stderr
    assert await client.queues.names() == []


async def test_get_json_is_what_the_server_holds(client: aqless.Client, run_cli: Cli) -> None:
    jid = await client.queues["q"].put("app.Send", {"a": 1}, tags=["t"], priority=3)
    job = await pop_one(client.queues["q"], worker="w-1")
    await job.fail("Boom", "Traceback\nValueError: boom")
    document = (await run_cli("--json", "get", jid)).json()
    raw = await client.protocol.json("job.get", jid)
    for name in ("jid", "klass", "queue", "state", "priority", "tags", "worker", "retries"):
        assert document[name] == raw[name], name
    assert document["remaining"] == raw["remaining"]
    assert document["data"] == {"a": 1}
    assert [entry["what"] for entry in document["history"]] == [e["what"] for e in raw["history"]]
    assert document["failure"]["group"] == "Boom" == raw["failure"]["group"]


async def test_get_shows_fields_data_history_and_failure(
    client: aqless.Client, run_cli: Cli
) -> None:
    jid = await client.queues["emails"].put("app.Send", {"to": "zed@example.com"}, tags=["vip"])
    job = await pop_one(client.queues["emails"], worker="w-7")
    await job.fail("SmtpError", "Traceback\nSmtpError: 550 mailbox unavailable")
    outcome = await run_cli("get", jid)
    assert outcome.code == 0
    for text in (jid, "app.Send", "emails", "failed", "vip", '"zed@example.com"', "history"):
        assert text in outcome.stdout, text
    for what in ("put", "popped", "failed"):
        assert f" {what} " in outcome.stdout, what
    assert "failed: SmtpError" in outcome.stdout
    assert "550 mailbox unavailable" in outcome.stdout
    assert "w-7" in outcome.stdout


async def test_get_a_recurring_job(client: aqless.Client, run_cli: Cli) -> None:
    await client.queues["q"].recur("app.Daily", {"d": 1}, interval=3600, jid="daily")
    outcome = await run_cli("get", "daily")
    assert outcome.code == 0
    assert "every 1 h" in outcome.stdout
    assert "app.Daily" in outcome.stdout
    document = (await run_cli("--json", "get", "daily")).json()
    assert (document["interval"], document["klass"], document["data"]) == (
        3600,
        "app.Daily",
        {"d": 1},
    )


async def test_an_unknown_jid_exits_1(client: aqless.Client, run_cli: Cli) -> None:
    for args in (("get", "nope"), ("priority", "nope", "3"), ("tag", "nope", "t"),
                 ("track", "nope")):  # fmt: skip
        outcome = await run_cli(*args)
        assert (outcome.code, outcome.stdout) == (1, ""), args
        assert "no job nope" in outcome.stderr, args
    as_json = await run_cli("--json", "get", "nope")
    assert as_json.code == 1
    assert json.loads(as_json.stdout) == {
        "error": {"type": "not_found", "message": "no job nope", "exit_code": 1}
    }
    assert "no job nope" in as_json.stderr


async def test_priority_of_a_job_and_of_a_recurring_job(
    client: aqless.Client, run_cli: Cli
) -> None:
    jid = await client.queues["q"].put("app.A", {})
    await client.queues["q"].recur("app.R", {}, interval=60, jid="r")
    assert (await run_cli("priority", jid, "9")).code == 0
    assert (await run_cli("priority", "r", "4")).code == 0
    assert (await get_job(client, jid)).priority == 9
    assert (await get_recurring(client, "r")).priority == 4


async def test_tag_and_untag(client: aqless.Client, run_cli: Cli) -> None:
    jid = await client.queues["q"].put("app.A", {}, tags=["a"])
    assert (await run_cli("--json", "tag", jid, "b", "c")).json() == {
        "jid": jid,
        "tags": ["a", "b", "c"],
    }
    outcome = await run_cli("untag", jid, "a")
    assert outcome.code == 0
    assert "b, c" in outcome.stdout
    assert (await get_job(client, jid)).tags == ("b", "c")


async def test_track_untrack_and_the_tracked_list(client: aqless.Client, run_cli: Cli) -> None:
    one = await client.queues["q"].put("app.A", {})
    two = await client.queues["q"].put("app.B", {})
    assert (await run_cli("track", one, two)).code == 0
    assert {job.jid for job in (await client.jobs.tracked())[0]} == {one, two}
    listing = await run_cli("track")
    assert one in listing.stdout
    assert two in listing.stdout
    assert "app.B" in listing.stdout
    assert (await run_cli("untrack", one)).code == 0
    document = (await run_cli("--json", "track")).json()
    assert [job["jid"] for job in document["jobs"]] == [two]


async def test_put_with_a_dedup_id_and_get_shows_it(client: aqless.Client, run_cli: Cli) -> None:
    first = await run_cli("put", "q", "app.Send", "--dedup", "order-7")
    again = await run_cli("put", "q", "app.Send", "--dedup", "order-7")
    assert first.code == again.code == 0
    assert first.stdout.strip() == again.stdout.strip()
    assert await client.queues["q"].length() == 1
    jid = first.stdout.strip()
    assert "dedup id" in (await run_cli("get", jid)).stdout
    assert (await run_cli("--json", "get", jid)).json()["dedup"] == "order-7"
    plain = await client.queues["q"].put("app.Send")
    assert "dedup" not in (await run_cli("--json", "get", plain)).json()
    refused = await run_cli("put", "q", "app.Send", "--debounce")
    assert refused.code == 2
    assert "--dedup" in refused.stderr


async def test_put_with_no_replace_leaves_a_finished_job_of_the_jid_alone(
    client: aqless.Client, run_cli: Cli
) -> None:
    first = await run_cli("put", "q", "app.Send", '{"n": 1}', "--jid", "once-7", "--no-replace")
    assert (first.code, first.stdout.strip()) == (0, "once-7")
    await (await pop_one(client.queues["q"])).complete()
    again = await run_cli("put", "q", "app.Send", '{"n": 2}', "--jid", "once-7", "--no-replace")
    assert (again.code, again.stdout.strip()) == (0, "once-7")
    job = await client.jobs.get("once-7")
    assert isinstance(job, aqless.Job)
    assert (job.state, job.data) == ("complete", {"n": 1})  # not put again, not run again
    refused = await run_cli("put", "q", "app.Send", "--dedup", "d", "--no-replace")
    assert refused.code != 0
    assert "not both" in refused.stderr


async def test_get_shows_the_progress_as_a_bar_and_in_json(
    client: aqless.Client, run_cli: Cli
) -> None:
    jid = await client.queues["q"].put("app.Resize", {})
    job = await pop_one(client.queues["q"])
    outcome = await run_cli("--json", "get", jid)
    assert outcome.json()["progress"] is None
    await job.progress(0.4, "resized [bold]4[/bold] of 10")
    document = (await run_cli("--json", "get", jid)).json()
    assert document["progress"]["fraction"] == 0.4
    assert document["progress"]["message"] == "resized [bold]4[/bold] of 10"
    shown = (await run_cli("get", jid)).stdout
    assert "40%" in shown
    assert "resized [bold]4[/bold] of 10" in shown  # text, not markup
    assert "━" in shown  # the bar


async def test_get_shows_the_checkpoint_and_in_json(client: aqless.Client, run_cli: Cli) -> None:
    jid = await client.queues["q"].put("app.Import", {})
    job = await pop_one(client.queues["q"])
    assert (await run_cli("--json", "get", jid)).json()["checkpoint"] is None
    assert "checkpoint" not in (await run_cli("get", jid)).stdout
    await job.checkpoint({"offset": 4000, "note": "[bold]rows[/bold]"})
    document = (await run_cli("--json", "get", jid)).json()
    assert document["checkpoint"] == {"state": {"offset": 4000, "note": "[bold]rows[/bold]"}}
    shown = (await run_cli("get", jid)).stdout
    assert "checkpoint" in shown
    assert '"offset": 4000' in shown
    assert "[bold]rows[/bold]" in shown  # text, not markup
