"""The aqless-run command line as a person or a deployment uses it, in real processes:
--help, --check, environment variables, --log-json, usage errors."""

from __future__ import annotations

import json
import signal

import click
import pytest

import aqless
from aqless.run import main
from tests.worker.process_helpers import (
    WORKER,
    Spawner,
    aq_fixture,  # noqa: F401
    count_reaches,
    put,
    spawn_fixture,  # noqa: F401
    valkey_only_fixture,  # noqa: F401
)

pytestmark = pytest.mark.timeout(30)

#: for the tests that need no server: one run is enough
server_free = pytest.mark.usefixtures("valkey_only")


async def finished(spawn: Spawner, *arguments: str, url: bool = True) -> tuple[int, str]:
    """Run aqless-run to its end: its exit status and its output."""
    process = spawn(*arguments, url=url)
    return await process.exited(timeout=10), process.log()


def long_options() -> list[str]:
    return [
        name
        for parameter in main.params
        if isinstance(parameter, click.Option) and not parameter.hidden
        for name in parameter.opts
        if name.startswith("--")
    ]


@server_free
async def test_help_lists_every_option_and_its_environment_variable(spawn: Spawner) -> None:
    code, text = await finished(spawn, "--help")
    assert code == 0
    assert len(long_options()) > 20
    for name in long_options():
        assert name in text, name
    for parameter in main.params:
        if isinstance(parameter, click.Option) and isinstance(parameter.envvar, str):
            assert parameter.envvar in text, parameter.envvar


async def test_check_with_a_good_configuration_exits_0(aq: aqless.Client, spawn: Spawner) -> None:
    await put(aq, "aqjobs.noop", 1)
    code, text = await finished(spawn, "--check", "-i", "aqjobs", "-c", "7", "q")
    assert code == 0, text
    assert "heartbeat 1 s" in text
    assert "7 slots" in text
    assert "allowed     aqjobs" in text


@server_free
@pytest.mark.parametrize(
    "arguments",
    [
        ("-i", "no_such_module"),
        ("--handlers", "aqjobs:nothing"),
        ("--url", "unix:///nonexistent/aqless.sock"),
        ("--url", "bogus://host"),
    ],
    ids=["import", "registry", "unreachable", "scheme"],
)
async def test_check_with_a_bad_configuration_exits_1(
    spawn: Spawner, arguments: tuple[str, ...]
) -> None:
    code, text = await finished(spawn, "--check", *arguments, "q")
    assert code == 1
    assert "Traceback" not in text
    assert "failed" in text or "Error" in text


@server_free
async def test_an_unreachable_server_stops_the_worker_with_one_clear_error(
    spawn: Spawner,
) -> None:
    code, text = await finished(spawn, "--url", "unix:///nonexistent/aqless.sock", "q")
    assert code == 1
    assert "Traceback" not in text
    assert "Error: " in text


@server_free
async def test_no_queue_is_a_usage_error(spawn: Spawner) -> None:
    code, text = await finished(spawn, "-i", "aqjobs")
    assert code == 2
    assert "at least one queue" in text


async def test_environment_variables_configure_the_worker(
    aq: aqless.Client, spawn: Spawner
) -> None:
    await put(aq, "aqjobs.noop", 2, queue="a")
    await put(aq, "aqjobs.noop", 2, queue="b")
    env = {"AQLESS_QUEUES": "a, b", "AQLESS_CONCURRENCY": "3", "AQLESS_IMPORT": "aqjobs"}
    checked = spawn("--check", env=env)
    assert await checked.exited() == 0
    assert "3 slots" in checked.log()
    assert "queues      a, b" in checked.log()
    worker = spawn(env={**env, "AQLESS_WORKER_NAME": "from-env"})
    await count_reaches(aq, "done", 4)
    assert "worker from-env serving a, b with 3 slots" in worker.log()


async def test_log_json_writes_json_lines(aq: aqless.Client, spawn: Spawner) -> None:
    await put(aq, "nowhere.Job", 1)  # fails: logs an error
    worker = spawn(*WORKER, "--log-json", "q")
    await worker.logged("nowhere.Job")
    worker.send(signal.SIGTERM)
    assert await worker.exited() == 0
    entries = [json.loads(line) for line in worker.log().splitlines() if line]
    assert {"info", "warning", "error"} <= {entry["level"] for entry in entries}
    for entry in entries:
        assert {"time", "level", "logger", "message", "pid"} <= set(entry)
        assert entry["pid"] == worker.pid


@server_free
async def test_version(spawn: Spawner) -> None:
    code, text = await finished(spawn, "--version")
    assert code == 0
    assert text.strip() == f"aqless-run, version {aqless.__version__}"
