"""workers, config, recurring, throttle."""

from __future__ import annotations

import aqless
from tests.cli.helpers import Cli
from tests.client_helpers import get_recurring, pop_one

pytest_plugins = ["tests.client_fixtures"]


async def test_workers_and_one_workers_jobs(client: aqless.Client, run_cli: Cli) -> None:
    for _ in range(2):
        await client.queues["q"].put("app.A", {"k": "v"})
    job = await pop_one(client.queues["q"], worker="w-1")
    await pop_one(client.queues["q"], worker="w-2")
    rows = [line.split() for line in (await run_cli("workers")).stdout.splitlines()]
    assert ["w-1", "1", "0"] in rows
    assert ["w-2", "1", "0"] in rows
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
    assert ["heartbeat", "120"] in [
        line.split() for line in (await run_cli("config", "list")).stdout.splitlines()
    ]
    unset = await run_cli("--json", "config", "unset", "heartbeat")
    assert unset.json() == {"heartbeat": "60"}  # back to the default
    missing = await run_cli("config", "get", "no-such-option")
    assert missing.code == 1
    assert missing.stdout == ""


async def test_recurring_list_show_update_cancel(client: aqless.Client, run_cli: Cli) -> None:
    await client.queues["a"].recur("app.Daily", {"d": 1}, interval=86400, jid="daily")
    await client.queues["b"].recur("app.Hourly", {}, interval=3600, jid="hourly", priority=2)
    await client.queues["b"].put("app.Plain", {})
    listing = await run_cli("recurring", "list")
    rows = {line.split()[0]: line.split() for line in listing.stdout.splitlines() if line.strip()}
    assert rows["daily"][1:4] == ["a", "app.Daily", "1d00h"]
    assert rows["hourly"][1:5] == ["b", "app.Hourly", "1h00m", "2"]
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
