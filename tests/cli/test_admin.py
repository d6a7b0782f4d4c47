"""workers, config (and its dump and load), patterns, recurring, throttle."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import aqless
from aqless import PriorityPattern
from tests.support.cli import Cli
from tests.support.clients import get_recurring, pop_one

pytest_plugins = ["tests.support.client_fixtures"]


async def test_workers_and_one_workers_jobs(client: aqless.Client, run_cli: Cli) -> None:
    for _ in range(2):
        await client.queues["q"].put("app.A", {"k": "v"})
    job = await pop_one(client.queues["q"], worker="w-1")
    await pop_one(client.queues["q"], worker="w-2")
    rows = [line.split() for line in (await run_cli("workers")).stdout.splitlines()]
    unknown_record = ["-"] * 10  # another client's worker: no host, pid, queues, mode...
    assert ["w-1", *unknown_record, "1", "0"] in rows
    assert ["w-2", *unknown_record, "1", "0"] in rows
    listing = (await run_cli("--json", "workers")).json()
    assert sorted(w["name"] for w in listing) == ["w-1", "w-2"]
    held = await run_cli("workers", "w-1")
    assert job.jid in held.stdout
    assert "running" in held.stdout
    document = (await run_cli("--json", "workers", "w-1")).json()
    assert [j["jid"] for j in document["jobs"]] == [job.jid]
    assert document["stalled"] == []
    unknown = await run_cli("workers", "w-9")
    assert unknown.code == 1
    assert "no worker 'w-9'" in unknown.stderr


async def test_config_list_get_set_unset(client: aqless.Client, run_cli: Cli) -> None:
    assert (await run_cli("config", "set", "heartbeat", "120")).code == 0
    assert await client.config.get("heartbeat") == "120"
    assert (await run_cli("config", "get", "heartbeat")).stdout.strip() == "120"
    assert (await run_cli("--json", "config", "list")).json() == await client.config.all()
    listed = [line.split() for line in (await run_cli("config", "list")).stdout.splitlines()]
    heartbeat = next(words for words in listed if words[:1] == ["heartbeat"])
    assert heartbeat[:3] == ["heartbeat", "120", "seconds"]
    assert " ".join(heartbeat[3:]).startswith("How long a popped job's lock lasts")
    unset = await run_cli("--json", "config", "unset", "heartbeat")
    assert unset.json() == {"heartbeat": "60"}  # back to the default
    missing = await run_cli("config", "get", "no-such-option")
    assert missing.code == 1
    assert missing.stdout == ""


async def test_config_set_refuses_a_value_not_of_its_option_type(
    client: aqless.Client, run_cli: Cli, tmp_path: Path
) -> None:
    refused = await run_cli("config", "set", "heartbeat", "banana")
    assert refused.code == 2
    assert "heartbeat must be a positive number of seconds, not 'banana'" in refused.stderr
    assert await client.config.get("heartbeat") == "60"
    settings = tmp_path / "config.json"
    settings.write_text('{"grace-period": 5, "jobs-history-count": "lots"}')
    whole = await run_cli("config", "load", str(settings))
    assert whole.code == 2
    assert "jobs-history-count must be a whole number from 0, not 'lots'" in whole.stderr
    assert await client.config.get("grace-period") == "10"  # nothing of the file was set


async def test_recurring_list_show_update_cancel(client: aqless.Client, run_cli: Cli) -> None:
    await client.queues["a"].recur("app.Daily", {"d": 1}, interval=86400, jid="daily")
    await client.queues["b"].recur("app.Hourly", {}, interval=3600, jid="hourly", priority=2)
    await client.queues["b"].put("app.Plain", {})
    listing = await run_cli("recurring", "list")
    rows = {line.split()[0]: line.split() for line in listing.stdout.splitlines() if line.strip()}
    assert rows["daily"][1:5] == ["a", "app.Daily", "1", "d"]
    assert rows["hourly"][1:6] == ["b", "app.Hourly", "1", "h", "2"]
    only_b = (await run_cli("--json", "recurring", "list", "b")).json()
    assert [job["jid"] for job in only_b] == ["hourly"]
    shown = (await run_cli("--json", "recurring", "show", "daily")).json()
    assert (shown["queue"], shown["interval"], shown["data"]) == ("a", 86400, {"d": 1})
    changed = await run_cli("--json", "recurring", "update", "daily", "--interval", "600",
                            "--priority", "3", "--data", '{"d": 2}')  # fmt: skip
    assert changed.json()["interval"] == 600
    daily = await get_recurring(client, "daily")
    assert (daily.interval, daily.priority, daily.data) == (600, 3, {"d": 2})
    assert (await run_cli("recurring", "update", "daily")).code == 2  # nothing to change
    assert (await run_cli("recurring", "cancel", "daily")).code == 0
    assert await client.jobs.get("daily") is None
    for args in (("show", "daily"), ("cancel", "daily"), ("update", "daily", "--priority", "1")):
        assert (await run_cli("recurring", *args)).code == 1, args


async def test_throttle_set_show_delete(client: aqless.Client, run_cli: Cli) -> None:
    assert (await run_cli("throttle", "set", "smtp", "2", "--expiration", "600")).code == 0
    info = await client.throttles["smtp"].get()
    assert info.maximum == 2
    assert 0 < info.ttl <= 600
    jid = await client.queues["q"].put("app.Mail", {}, throttles=["smtp"])
    await pop_one(client.queues["q"])
    shown = (await run_cli("--json", "throttle", "show", "smtp")).json()
    assert (shown["maximum"], shown["locks"], shown["pending"]) == (2, [jid], [])
    table = await run_cli("throttle", "show", "smtp")
    assert "held by" in table.stdout
    assert jid in table.stdout
    assert (await run_cli("throttle", "delete", "smtp")).code == 0
    assert (await client.throttles["smtp"].get()).maximum == 0
    assert (await run_cli("throttle", "show", "nothing")).code == 1


async def test_a_queues_own_throttle(client: aqless.Client, run_cli: Cli) -> None:
    assert (await run_cli("throttle", "set", "emails", "4", "--queue")).code == 0
    assert (await client.queues["emails"].throttle()).maximum == 4
    shown = (await run_cli("--json", "throttle", "show", "emails", "--queue")).json()
    assert shown["maximum"] == 4
    assert shown["id"].endswith("q:emails")
    assert (
        await run_cli("throttle", "set", "emails", "4", "--queue", "--expiration", "5")
    ).code == 2


async def test_config_dump_then_load(client: aqless.Client, run_cli: Cli) -> None:
    await client.config.set("heartbeat", 120)
    await client.config.set("emails-heartbeat", 30)
    dumped = await run_cli("config", "dump")  # JSON without --json: it is a file's content
    assert json.loads(dumped.stdout) == await client.config.all()
    assert json.loads(dumped.stdout)["heartbeat"] == "120"
    await client.config.set("heartbeat", 5)
    await client.config.set("grace-period", 1)
    await client.config.set("reports-heartbeat", 7)
    loaded = await run_cli("--json", "config", "load", "-", input=dumped.stdout)
    assert loaded.json()["unset"] == []
    assert await client.config.get("heartbeat") == "120"
    assert await client.config.get("grace-period") == "10"  # the dump holds the defaults too
    assert await client.config.get("reports-heartbeat") == "7"  # not cleared without --clear
    await client.config.set("grace-period", 1)
    settings = json.dumps({"heartbeat": 90, "jobs-history": "3600"})
    cleared = await run_cli("--json", "config", "load", "-", "--clear", input=settings)
    assert {"emails-heartbeat", "reports-heartbeat"} <= set(cleared.json()["unset"])
    assert await client.config.get("reports-heartbeat") is None
    assert await client.config.get("emails-heartbeat") is None
    assert await client.config.get("grace-period") == "10"  # back to its default
    assert (await client.config.get("heartbeat"), await client.config.get("jobs-history")) == (
        "90",
        "3600",
    )


async def test_config_load_from_a_file(client: aqless.Client, run_cli: Cli, tmp_path: Path) -> None:
    settings = tmp_path / "config.json"
    settings.write_text('{"heartbeat": "75", "max-worker-age": 600.5}')
    outcome = await run_cli("config", "load", str(settings))
    assert "set 2 settings" in outcome.stdout
    assert await client.config.get("max-worker-age") == "600.5"


@pytest.mark.parametrize(
    "text", ["not json", "[1, 2]", '{"heartbeat": true}', '{"heartbeat": 1, "x": {"y": 1}}']
)
async def test_config_load_refuses_a_bad_file_whole(
    client: aqless.Client, run_cli: Cli, text: str
) -> None:
    outcome = await run_cli("config", "load", "-", "--clear", input=text)
    assert outcome.code == 2
    assert await client.config.get("heartbeat") == "60"
    assert (await run_cli("config", "load", "/no/such/file")).code == 2


async def test_patterns_show_and_set(client: aqless.Client, run_cli: Cli) -> None:
    shown = (await run_cli("--json", "patterns", "show")).json()
    assert shown == {
        "identifiers": {"default": ["*"]},
        "priorities": [{"patterns": ["default"], "fairly": False}],
    }
    assert (await run_cli("patterns", "set-identifier", "mail", "mail-*", "!mail-spam")).code == 0
    await run_cli("patterns", "set-identifier", "web", "web")
    identifiers = await client.queue_patterns.identifiers()
    assert identifiers == {"mail": ["mail-*", "!mail-spam"], "web": ["web"], "default": ["*"]}
    table = await run_cli("patterns", "show")
    assert ["mail", "mail-*,", "!mail-spam"] in [line.split() for line in table.stdout.splitlines()]
    assert (await run_cli("patterns", "unset-identifier", "mail")).code == 0
    assert "mail" not in await client.queue_patterns.identifiers()
    missing = await run_cli("patterns", "unset-identifier", "mail")
    assert missing.code == 1
    assert "no identifier 'mail'" in missing.stderr
    assert (await run_cli("patterns", "set-identifier", "empty")).code == 2


async def test_patterns_set_priorities(client: aqless.Client, run_cli: Cli) -> None:
    outcome = await run_cli("--json", "patterns", "set-priorities", "urgent-*,alerts",
                            "fairly:bulk-*")  # fmt: skip
    assert outcome.json() == [
        {"patterns": ["urgent-*", "alerts"], "fairly": False},
        {"patterns": ["bulk-*"], "fairly": True},
        {"patterns": ["default"], "fairly": False},
    ]
    assert await client.queue_patterns.priorities() == [
        PriorityPattern(("urgent-*", "alerts")),
        PriorityPattern(("bulk-*",), fairly=True),
        PriorityPattern(("default",)),
    ]
    text = await run_cli("patterns", "set-priorities", "default", "slow")
    assert "default > slow" in text.stdout
    assert (await run_cli("patterns", "set-priorities", "fairly:")).code == 2
    assert len(await client.queue_patterns.priorities()) == 2  # the refused call changed nothing
    assert (await run_cli("patterns", "set-priorities")).code == 0
    assert await client.queue_patterns.priorities() == [PriorityPattern(("default",))]
