"""The aqless-run command line as a person or a deployment uses it, in real processes:
--help, --check, environment variables, --log-json, usage errors."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import click
import pytest

import aqless
from aqless._worker.process import EXIT_RECYCLE
from aqless.cli.app import CannotConnect, ServerRefused, SetupError
from aqless.run import EXIT_CODES, EXIT_SERVER_REFUSED, EXIT_UNREACHABLE, EXIT_USAGE, main
from tests.support.servers import RestartableValkey
from tests.support.worker_processes import (
    WORKER,
    Spawner,
    aq_fixture,  # noqa: F401
    count_reaches,
    eventually,
    put,
    reach_states,
    spawn_fixture,  # noqa: F401
    valkey_only_fixture,  # noqa: F401
)

pytestmark = pytest.mark.timeout(30)

#: for the tests that need no server: one run is enough
server_free = pytest.mark.usefixtures("valkey_only")


async def finished(spawn: Spawner, *arguments: str, url: bool = True) -> tuple[int, str]:
    """Run aqless-run to its end: its exit status and its output."""
    process = spawn(*arguments, url=url)
    return await process.exited(), process.log()


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


UNREACHABLE = "unix:///nonexistent/aqless.sock"


@server_free
@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        (("-i", "no_such_module"), EXIT_USAGE),
        (("--handlers", "aqjobs:nothing"), EXIT_USAGE),
        (("--url", UNREACHABLE), EXIT_UNREACHABLE),
        (("--url", "bogus://host"), EXIT_USAGE),
    ],
    ids=["import", "registry", "unreachable", "scheme"],
)
async def test_check_with_a_bad_configuration_exits_with_the_cli_s_code(
    spawn: Spawner, arguments: tuple[str, ...], code: int
) -> None:
    exit_code, text = await finished(spawn, "--check", *arguments, "q")
    assert exit_code == code, text
    assert "Traceback" not in text
    assert "failed" in text or "Error" in text


@server_free
@pytest.mark.parametrize("arguments", [(), ("-p", "2")], ids=["worker", "supervisor"])
async def test_an_unreachable_server_stops_the_worker_with_one_clear_error(
    spawn: Spawner, arguments: tuple[str, ...]
) -> None:
    code, text = await finished(spawn, "--url", UNREACHABLE, *arguments, "q")
    assert code == EXIT_UNREACHABLE == CannotConnect.exit_code
    assert "Traceback" not in text
    assert text.count("Error: cannot connect to the server at unix:///nonexistent/") == 1
    assert "config.get" not in text  # the internal call that met it is no one's business


def test_exit_codes_are_those_of_the_aqless_command() -> None:
    assert EXIT_USAGE == SetupError.exit_code == click.UsageError.exit_code
    assert ServerRefused.exit_code == EXIT_SERVER_REFUSED
    assert CannotConnect.exit_code == EXIT_UNREACHABLE
    for code in (0, 1, EXIT_USAGE, EXIT_SERVER_REFUSED, EXIT_UNREACHABLE, EXIT_RECYCLE, 130):
        assert f"\n  {code} " in EXIT_CODES


@server_free
async def test_help_shows_the_exit_codes(spawn: Spawner) -> None:
    code, text = await finished(spawn, "--help")
    assert code == 0
    assert "Exit codes:" in text
    assert "cannot connect to the server" in text


@server_free
async def test_wait_for_server_gives_up_after_its_seconds_with_exit_4(spawn: Spawner) -> None:
    code, text = await finished(spawn, "--url", UNREACHABLE, "--wait-for-server", "1.5", "q")
    assert code == EXIT_UNREACHABLE, text
    waits = [line for line in text.splitlines() if "waiting for the server at" in line]
    assert len(waits) >= 2, text  # each attempt says how long it waited and has left
    assert all(" s waited, " in line and " s left; again in " in line for line in waits)
    assert "attempts in" in text.splitlines()[-1]
    assert "Traceback" not in text


@server_free
async def test_a_bad_wait_for_server_is_a_usage_error(spawn: Spawner) -> None:
    code, text = await finished(spawn, "--wait-for-server", "soon", "q")
    assert code == EXIT_USAGE
    assert "--wait-for-server" in text


@server_free
async def test_a_stop_while_waiting_for_the_server_exits_0(spawn: Spawner) -> None:
    worker = spawn("--url", UNREACHABLE, "--wait-for-server", "60", "q")
    await worker.logged("waiting for the server at")
    worker.send(signal.SIGHUP)  # obeyed meanwhile: a log rotation must not end it
    await worker.logged("SIGHUP")
    worker.send(signal.SIGTERM)
    assert await worker.exited() == 0, worker.log()


@server_free
async def test_wait_for_server_starts_once_the_server_is_up(spawn: Spawner, tmp_path: Path) -> None:
    server = RestartableValkey(tmp_path / "later")
    try:
        worker = spawn(*WORKER, "--wait-for-server", "60", "q", env={"AQLESS_URL": server.url})
        await worker.logged("waiting for the server at", times=2)
        assert worker.running()
        server.start()
        await worker.logged("answers, after")
        async with aqless.Client(server.url) as aq:
            jids = await put(aq, "aqjobs.noop", 1)
            await reach_states(aq, jids, {"complete": 1})
        worker.send(signal.SIGTERM)
        assert await worker.exited() == 0
    finally:
        server.close()


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


def module(folder: Path, name: str, text: str) -> None:
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.py").write_text(text)


LIBRARY = """
async def mark(job):
    await job.client.redis.rpush("marked", job.jid)
"""
HOOKS = """
import contextlib


@contextlib.asynccontextmanager
async def around(job):
    await job.client.redis.rpush("around", job.jid)
    yield
"""


@pytest.mark.timeout(60)  # three aqless-run processes, one after another
async def test_path_puts_folders_first_on_the_module_path(
    aq: aqless.Client, spawn: Spawner, tmp_path: Path
) -> None:
    module(tmp_path / "lib", "libjobs", LIBRARY)
    module(tmp_path / "hooks", "libhooks", HOOKS)
    imports = ("-i", "libjobs", "--middleware", "libhooks:around")
    code, text = await finished(spawn, "--check", *imports, "q")
    assert code == EXIT_USAGE, "found without --path"
    assert "libjobs" in text
    code, text = await finished(spawn, "--check", "--path", "lib", "--path", "hooks", *imports, "q")
    assert code == 0, text
    assert "allowed     libjobs" in text
    jids = await put(aq, "libjobs.mark", 2)
    worker = spawn(*imports, "-p", "2", "q", env={"AQLESS_PATH": f"lib{os.pathsep}hooks"})
    await reach_states(aq, jids, {"complete": 2})
    assert sorted(await aq.redis.lrange("around", 0, -1)) == sorted(jids)
    assert worker.running()


async def test_log_file_gets_every_process_log_and_hup_reopens_it(
    aq: aqless.Client, spawn: Spawner, tmp_path: Path
) -> None:
    log = tmp_path / "logs" / "worker.log"
    log.parent.mkdir()
    supervisor = spawn(*WORKER, "-p", "2", "q", env={"AQLESS_LOG_FILE": "logs/worker.log"})
    await eventually(lambda: log.exists() and log.read_text().count("serving q") == 2)
    assert supervisor.log() == ""  # nothing on stderr
    workers = supervisor.children()
    for pid in [supervisor.pid, *workers]:
        assert f"[{pid}]" in log.read_text()
    log.rename(tmp_path / "logs" / "worker.log.1")  # a rotation
    supervisor.send(signal.SIGHUP)
    await eventually(lambda: log.exists() and log.read_text().count("SIGHUP: reopened") == 2)
    assert supervisor.children() == workers
    assert f"[{supervisor.pid}] aqless._worker.supervisor: supervisor: SIGHUP" in log.read_text()
    assert "SIGHUP" not in (tmp_path / "logs" / "worker.log.1").read_text()
    jids = await put(aq, "aqjobs.noop", 1)
    await reach_states(aq, jids, {"complete": 1})
