"""audit: every state-changing command leaves one entry (who, what, when); reads leave none."""

from __future__ import annotations

import getpass
import socket
import time
from pathlib import Path

import pytest

import aqless
from aqless.ops import audit
from tests.support.cli import Cli

pytest_plugins = ["tests.support.client_fixtures"]


def me() -> str:
    return f"{getpass.getuser()}@{socket.gethostname()}"


async def test_changes_are_recorded_with_who_what_and_when(
    client: aqless.Client, run_cli: Cli
) -> None:
    jid = await client.queues["q"].put("app.A", {})
    before = time.time()
    assert (await run_cli("priority", jid, "7")).code == 0
    assert (await run_cli("pause", "q", "r")).code == 0
    assert (await run_cli("config", "set", "heartbeat", "90")).code == 0
    after = time.time()
    entries = await audit.read(client)
    assert [entry.action for entry in entries] == ["config set", "pause", "priority"]
    config_set, pause, priority = entries
    assert priority.targets == (jid, "7")
    assert pause.targets == ("q", "r")
    assert config_set.targets == ("heartbeat", "90")
    for entry in entries:
        assert entry.who == me()
        assert entry.via == "cli"
        assert entry.outcome == "ok"
        assert before <= entry.at <= after
    assert await client.redis.exists("ql:aqless:audit")


async def test_reads_leave_no_entry(client: aqless.Client, run_cli: Cli) -> None:
    await client.queues["q"].put("app.A", {})
    for command in (["queues"], ["config", "list"], ["track"], ["workers"], ["audit"]):
        assert (await run_cli(*command)).code == 0, command
    assert await audit.read(client) == []


async def test_a_refused_change_is_recorded_with_its_error(
    client: aqless.Client, run_cli: Cli
) -> None:
    outcome = await run_cli("priority", "no-such-jid", "3")
    assert outcome.code == 1
    (entry,) = await audit.read(client)
    assert entry.action == "priority"
    assert entry.targets == ("no-such-jid", "3")
    assert "no-such-jid" in entry.outcome


async def test_options_given_are_kept(client: aqless.Client, run_cli: Cli) -> None:
    assert (await run_cli("throttle", "set", "api", "3", "--expiration", "60")).code == 0
    (entry,) = await audit.read(client)
    assert entry.action == "throttle set"
    assert entry.targets == ("api", "3")
    assert entry.detail == {"expiration": "60"}


async def test_audit_lists_newest_first_as_a_table_and_as_json(
    client: aqless.Client, run_cli: Cli
) -> None:
    for name in ("first", "second", "third"):
        assert (await run_cli("pause", name)).code == 0
    listing = (await run_cli("audit", "--limit", "2", "--json")).json()
    assert [entry["targets"] for entry in listing] == [["third"], ["second"]]
    assert {entry["who"] for entry in listing} == {me()}
    assert (await run_cli("--json", "audit")).json()[2]["targets"] == ["first"]
    text = (await run_cli("audit")).stdout
    rows = [line.split() for line in text.splitlines() if "pause" in line]
    assert len(rows) == 3
    assert {me(), "third", "ok"} <= set(rows[0])


async def test_the_log_keeps_its_configured_length(
    client: aqless.Client, run_cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AQLESS_AUDIT_LENGTH", "2")
    for name in ("a", "b", "c"):
        assert (await run_cli("unpause", name)).code == 0
    assert await client.redis.llen("ql:aqless:audit") == 2
    assert [entry.targets for entry in await audit.read(client)] == [("c",), ("b",)]
    monkeypatch.setenv("AQLESS_AUDIT_LENGTH", "zero")
    assert (await run_cli("unpause", "d")).code == 2


async def test_a_namespace_keeps_its_own_log(server_url: str, client: aqless.Client) -> None:
    cli = Cli(server_url)
    assert (await cli("--namespace", "billing", "pause", "q")).code == 0
    assert await client.redis.llen("billing:ql:aqless:audit") == 1
    assert await client.redis.llen("ql:aqless:audit") == 0


async def test_web_refuses_users_it_cannot_read(run_cli: Cli, tmp_path: Path) -> None:
    bad = await run_cli("web", "--port", "0", "--user", "ann")
    assert bad.code == 2
    assert "NAME:SECRET" in bad.stderr
    twice = await run_cli("web", "--port", "0", "--user", "ann:a", "--user", "ann:b")
    assert twice.code == 2
    assert "given twice: ann" in twice.stderr
    missing = await run_cli("web", "--port", "0", "--users-file", str(tmp_path / "none"))
    assert missing.code == 2
    assert "cannot read the users file" in missing.stderr
    empty = tmp_path / "users"
    empty.write_text("# nobody yet\n")
    nobody = await run_cli("web", "--port", "0", "--users-file", str(empty))
    assert nobody.code == 2
    assert "names no user" in nobody.stderr


async def test_a_recurring_update_records_what_changed(client: aqless.Client, run_cli: Cli) -> None:
    await client.queues["q"].recur("app.Tick", {}, interval=60, jid="tick")
    change = ("--interval", "30", "--priority", "0", "--retries", "0", "--backlog", "0")
    outcome = await run_cli("recurring", "update", "tick", *change)
    assert outcome.code == 0, outcome.stderr
    (entry,) = await audit.read(client)
    assert entry.action == "recurring update"
    assert entry.targets == ("tick",)
    # zeros are changes too (they were dropped, leaving the entry without details)
    assert entry.detail == {"interval": "30", "priority": "0", "retries": "0", "backlog": "0"}


async def test_web_refuses_a_trusted_origin_that_names_no_origin(run_cli: Cli) -> None:
    refused = await run_cli("web", "--port", "0", "--trusted-origin", "ops.example.com/aqless")
    assert refused.code == 2
    assert "a trusted origin is scheme://host[:port]" in refused.stderr
