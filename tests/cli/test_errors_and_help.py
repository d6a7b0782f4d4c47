"""Exit codes of each class of error, --namespace, and the help of every command."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import click
import pytest

import aqless
from aqless.cli import cli
from tests.support.cli import ENVIRONMENT, Cli

pytest_plugins = ["tests.support.client_fixtures"]


def command_paths() -> list[tuple[str, ...]]:
    """Every command and subcommand, as the words that name it."""
    paths: list[tuple[str, ...]] = []
    context = click.Context(cli)
    for name in cli.list_commands(context):
        command = cli.get_command(context, name)
        paths.append((name,))
        if isinstance(command, click.Group):
            paths.extend((name, sub) for sub in sorted(command.commands))
    return paths


async def test_the_server_refusing_exits_3_with_its_reason(
    client: aqless.Client, run_cli: Cli
) -> None:
    first = await client.queues["q"].put("app.First", {})
    await client.queues["q"].put("app.Second", {}, depends=[first])
    outcome = await run_cli("cancel", first)
    assert outcome.code == 3
    assert outcome.stdout == ""
    assert "is a dependency of" in outcome.stderr
    assert await client.jobs.get(first) is not None


async def test_a_bad_input_exits_2_naming_it_with_nothing_written(
    client: aqless.Client, run_cli: Cli
) -> None:
    for args in (
        ("put", "q", "app.A", "--priority", "nan"),
        ("put", "q", "app.A", "--delay", "-5"),
        ("put", "a b", "app.A"),
        ("put", "q", "app.A", "--tags", "a\tb"),
    ):
        refused = await run_cli(*args)
        assert refused.code == 2, args
        assert "must be" in refused.stderr, args
    refused = await run_cli("put", "q", "app.A", "--priority", "inf")
    assert "priority must be a number, not inf" in refused.stderr
    assert await client.redis.keys("*") == ["ql:aqless:audit"]  # each refusal, audited


async def test_no_server_exits_4(run_cli: Cli, tmp_path: object) -> None:
    away = Cli(f"unix://{tmp_path}/nothing-listens-here.sock")
    for args in (("queues",), ("get", "x"), ("events",)):
        outcome = await away(*args)
        assert outcome.code == 4, args
        assert "cannot connect" in outcome.stderr
        assert outcome.stdout == ""
    for json_args in (["--json", "get", "x"], ["peek", "q", "--json"], ["events", "--json"]):
        outcome = await away(*json_args)
        assert outcome.code == 4, json_args
        assert "cannot connect" in outcome.stderr
        error = json.loads(outcome.stdout)["error"]
        assert (error["type"], error["exit_code"], error["cause"]) == (
            "cannot_connect",
            4,
            "ConnectionLostError",
        )
        assert "cannot connect" in error["message"]


async def test_json_is_accepted_anywhere(client: aqless.Client, run_cli: Cli) -> None:
    jid = await client.queues["emails"].put("app.Send", {})
    for args in (
        ("--json", "peek", "emails"),
        ("peek", "--json", "emails"),
        ("peek", "emails", "--json"),
    ):
        outcome = await run_cli(*args)
        assert [job["jid"] for job in outcome.json()] == [jid], args
    shards = await run_cli("config", "get", "heartbeat", "--json")
    assert shards.json() == {"heartbeat": "60"}
    data = await run_cli("put", "emails", "app.Send", "--", "--json")  # after --: an argument
    assert data.code == 2  # not JSON data (it was not taken for the flag)


@pytest.mark.parametrize(
    ("args", "kind", "code"),
    [
        (("get", "no-such-jid"), "not_found", 1),
        (("no-such-command",), "usage", 2),
        (("peek",), "usage", 2),
        (("config", "set", "heartbeat", "banana"), "usage", 2),
        (("queue", "empty", "q", "--state", "waiting"), "aborted", 1),
    ],
)
async def test_with_json_a_failure_prints_an_error_document_on_stdout(
    client: aqless.Client, run_cli: Cli, args: tuple[str, ...], kind: str, code: int
) -> None:
    await client.queues["q"].put("app.A", {})
    outcome = await run_cli(*args, "--json", input="n\n")
    assert outcome.code == code
    error = json.loads(outcome.stdout)
    assert error["error"]["type"] == kind
    assert error["error"]["exit_code"] == code
    assert error["error"]["message"]


async def test_the_server_refusing_has_an_error_document_too(
    client: aqless.Client, run_cli: Cli
) -> None:
    first = await client.queues["q"].put("app.First", {})
    await client.queues["q"].put("app.Second", {}, depends=[first])
    outcome = await run_cli("--json", "cancel", first)
    assert outcome.code == 3
    error = json.loads(outcome.stdout)["error"]
    assert (error["type"], error["cause"]) == ("server_refused", "JobDependedOnError")
    assert "is a dependency of" in error["message"]


async def test_a_bad_url_exits_2(run_cli: Cli) -> None:
    outcome = await Cli("nonsense://x")("queues")
    assert outcome.code == 2
    assert "nonsense://x" in outcome.stderr


async def test_a_namespace_keeps_its_own_keys(client: aqless.Client, run_cli: Cli) -> None:
    jid = (await run_cli("--namespace", "billing", "put", "q", "app.A")).stdout.strip()
    assert await client.redis.exists(f"billing:ql:j:{jid}") == 1
    assert await client.jobs.get(jid) is None
    assert (await run_cli("--namespace", "billing", "get", jid)).code == 0
    assert (await run_cli("get", jid)).code == 1


async def test_web_without_the_dashboard_says_what_to_install(
    run_cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "aqless.web", None)  # importing it raises ImportError
    outcome = await run_cli("web", "--port", "0")
    assert outcome.code == 2
    assert "the dashboard needs the 'web' extra: pip install 'aqless[web]'" in outcome.stderr


async def test_the_group_help_documents_the_exit_codes(run_cli: Cli) -> None:
    outcome = await run_cli("--help")
    assert outcome.code == 0
    for line in ("0  done", "1  what was asked for does not exist", "2  usage", "3  the server",
                 "4  cannot connect"):  # fmt: skip
        assert line in outcome.stdout
    assert all(f"  {path[0]} " in outcome.stdout for path in command_paths())


@pytest.mark.parametrize("path", command_paths(), ids=" ".join)
async def test_every_command_has_complete_help(run_cli: Cli, path: tuple[str, ...]) -> None:
    outcome = await run_cli(*path, "--help")
    assert outcome.code == 0
    assert outcome.stdout.startswith("Usage: ")
    command: click.Command | None = cli
    for word in path:
        assert isinstance(command, click.Group)
        command = command.get_command(click.Context(command), word)
    assert command is not None
    assert command.help is not None
    assert len(command.help.split()) >= 5, "a real description"
    assert "Example" in command.help
    assert not command.get_short_help_str(limit=60).endswith("..."), "a short help that fits"
    for param in command.params:
        if isinstance(param, click.Option) and param.name != "help":
            assert param.help, f"--{param.name} has no help"


def dashboard_command(prefix: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*prefix, *args],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        env={**os.environ, **ENVIRONMENT},
    )


PYTHON_M_AQLESS_WEB = [sys.executable, "-m", "aqless.web"]


def test_python_m_aqless_web_names_the_aqless_web_command() -> None:
    """The dashboard does not import the command line (no two-way tie): its ``__main__``
    sends the user to `aqless web`, and exits 2 as for a usage error."""
    alias = dashboard_command(PYTHON_M_AQLESS_WEB, "--help")
    assert alias.returncode == 2
    assert "`aqless web`" in alias.stderr
    assert alias.stdout == ""


async def test_the_dashboard_command_exits_2_for_a_bad_url(run_cli: Cli) -> None:
    command = await run_cli("web", "--url", "bogus://x", "--port", "0")
    assert command.code == 2
    assert "bad server URL 'bogus://x'" in command.stderr


async def test_retry_into_a_queue_the_rule_refuses_exits_2_naming_it(
    client: aqless.Client, run_cli: Cli
) -> None:
    refused = await run_cli("retry", "some-group", "--queue", "a b")
    assert refused.code == 2
    assert "'--queue'" in refused.stderr
    assert "queue must be a name of 1 to 128 characters" in refused.stderr
