"""The admin command refuses an operator's setting outside its rule (aqless.rules) with the
rule's words and exit status 2, before anything is written; a negative number typed as an
argument is a value for the rule to refuse, not an unknown option."""

from __future__ import annotations

from pathlib import Path

import pytest

import aqless
from aqless.ops import audit
from tests.support.cli import Cli

pytest_plugins = ["tests.support.client_fixtures"]


@pytest.mark.parametrize(
    ("args", "refusal"),
    [
        (("recurring", "update", "tick", "--interval", "0"), "interval must be a positive"),
        (("recurring", "update", "tick", "--interval", "-10"), "interval must be a positive"),
        (("recurring", "update", "tick", "--backlog", "-1"), "backlog must be a whole number"),
        (("recurring", "update", "tick", "--retries", "-1"), "retries must be a whole number"),
        (("config", "set", "heartbeat", "-5"), "heartbeat must be a positive number"),
        (("config", "set", "heartbeat", "0"), "heartbeat must be a positive number"),
        (("config", "set", "jobs-history", "-1"), "jobs-history must be a number of seconds"),
        (("config", "set", "grace-period", "-1"), "grace-period must be a number of seconds"),
        (("config", "set", "max-job-history", "-1"), "max-job-history must be a whole number"),
        (("config", "set", "hearbeat", "30"), "option must be an option the scripts read"),
        (("throttle", "set", "smtp", "-1"), "maximum must be a whole number from 0"),
        (("throttle", "set", "emails", "-1", "--queue"), "maximum must be a whole number"),
        (("rate-limit", "set", "api", "-1"), "limit must be a whole number from 1"),
        (("rate-limit", "set", "api", "5", "--per", "0"), "per must be a positive number"),
        (("groups", "set", "q", "g", "--concurrency", "-1"), "concurrency must be a whole"),
        (("jobs", "q", "waiting", "-n", "-5"), "count must be a whole number from 1"),
        (("jobs", "q", "waiting", "-n", "0"), "count must be a whole number from 1"),
        (("jobs", "q", "waiting", "--offset", "-1"), "offset must be a whole number from 0"),
        (("peek", "q", "-n", "-1"), "count must be a whole number from 1"),
        (("failed", "boom", "-n", "0"), "count must be a whole number from 1"),
        (("batches", "list", "--offset", "-1"), "offset must be a whole number from 0"),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, tuple) else "",
)
async def test_a_setting_outside_its_rule_is_refused_and_nothing_written(
    client: aqless.Client, run_cli: Cli, args: tuple[str, ...], refusal: str
) -> None:
    await client.queues["q"].recur("app.Tick", {}, interval=60, jid="tick")
    before = {key: await client.redis.dump(key) for key in await client.redis.keys("*")}
    outcome = await run_cli(*args)
    assert outcome.code == 2, outcome.stderr
    assert refusal in outcome.stderr
    assert "No such option" not in outcome.stderr
    after = {key: await client.redis.dump(key) for key in await client.redis.keys("*")}
    assert after == before  # nothing written (the audit log included)
    assert await audit.read(client) == []


async def test_a_config_option_unknown_to_the_scripts_is_set_when_forced(
    client: aqless.Client, run_cli: Cli
) -> None:
    outcome = await run_cli("config", "set", "my-client-option", "on", "--force")
    assert outcome.code == 0, outcome.stderr
    assert await client.config.get("my-client-option") == "on"


async def test_config_load_refuses_an_unknown_option_unless_forced(
    client: aqless.Client, run_cli: Cli, tmp_path: Path
) -> None:
    settings = tmp_path / "config.json"
    settings.write_text('{"heartbeat": 90, "another-clients-option": "on"}')
    refused = await run_cli("config", "load", str(settings))
    assert refused.code == 2
    assert "option must be an option the scripts read" in refused.stderr
    assert await client.redis.hgetall("ql:config") == {}  # nothing of the file was set
    forced = await run_cli("config", "load", str(settings), "--force")
    assert forced.code == 0, forced.stderr
    assert await client.redis.hgetall("ql:config") == {
        "heartbeat": "90",
        "another-clients-option": "on",
    }
