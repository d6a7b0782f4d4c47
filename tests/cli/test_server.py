"""`aqless server`: the embedded Valkey seen, started and stopped from the command line,
in a data folder of the test's own (never the user's)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from aqless import embedded


def aqless(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "aqless.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"},
    )


@pytest.fixture
def folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    # a short path: a unix socket's path is limited to about 100 bytes
    path = Path(tmp_path_factory.mktemp("srv"))
    yield path
    embedded.stop(path)


def test_status_start_status_stop(folder: Path) -> None:
    missing = aqless("server", "status", "--folder", str(folder))
    assert missing.returncode == 1
    assert f"no embedded server runs in {folder}" in missing.stderr
    as_json = aqless("--json", "server", "status", "--folder", str(folder))
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout)["error"] == {
        "type": "not_found",
        "message": f"no embedded server runs in {folder}",
        "exit_code": 1,
    }

    started = aqless("server", "start", "--folder", str(folder))
    assert started.returncode == 0, started.stderr
    running = embedded.find(folder)
    assert running is not None
    assert started.stdout.strip() == running.url

    shown = aqless("--json", "server", "status", "--folder", str(folder))
    assert shown.returncode == 0, shown.stderr
    document = json.loads(shown.stdout)
    assert document["pid"] == running.pid
    assert document["folder"] == str(folder)
    assert document["url"] == running.url
    assert document["used_memory"] > 0
    assert document["data_bytes"] > 0

    table = aqless("server", "status", "--folder", str(folder))
    assert str(running.pid) in table.stdout
    assert "memory" in table.stdout
    assert "Valkey" in table.stdout

    stopped = aqless("server", "stop", "--folder", str(folder))
    assert stopped.returncode == 0, stopped.stderr
    assert "stopped the embedded server" in stopped.stderr
    assert embedded.find(folder) is None
    again = aqless("server", "stop", "--folder", str(folder))
    assert "no embedded server runs" in again.stderr
    as_json = aqless("server", "stop", "--folder", str(folder), "--json")
    assert json.loads(as_json.stdout) == {"folder": str(folder), "stopped": False}


def test_status_counts_the_keys_of_every_database(folder: Path) -> None:
    running = embedded.start(folder)
    with redis.Redis(unix_socket_path=str(running.socket_path)) as plain:
        plain.set("a", 1)
        plain.select(3)
        plain.set("b", 2)
        plain.set("c", 3)
    status = embedded.status(folder)
    assert status is not None
    assert status.keys == 3
    assert status.server.pid == running.pid


def test_reset_deletes_every_key_once_confirmed(folder: Path) -> None:
    running = embedded.start(folder)
    with redis.Redis(unix_socket_path=str(running.socket_path)) as plain:
        plain.set("ql:q:emails-work", 1)
        plain.select(2)
        plain.set("kept-until-reset", 2)
    asked = subprocess.run(
        [sys.executable, "-m", "aqless.cli", "server", "reset", "--folder", str(folder)],
        input="n\n",
        capture_output=True,
        text=True,
        timeout=60,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"},
    )
    assert asked.returncode == 1
    assert "delete every key (2) of the embedded server" in asked.stderr
    status = embedded.status(folder)
    assert status is not None
    assert status.keys == 2

    done = aqless("--json", "server", "reset", "--yes", "--folder", str(folder))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"folder": str(folder), "deleted_keys": 2}
    status = embedded.status(folder)
    assert status is not None
    assert status.keys == 0
    assert status.server.pid == running.pid  # the running server stays up


def test_reset_of_a_stopped_server_starts_it_for_the_reset_and_stops_it(folder: Path) -> None:
    running = embedded.start(folder)
    with redis.Redis(unix_socket_path=str(running.socket_path)) as plain:
        plain.set("a", 1)
    embedded.stop(folder)
    done = aqless("server", "reset", "--yes", "--folder", str(folder))
    assert done.returncode == 0, done.stderr
    assert "deleted 1 key of the embedded server" in done.stdout
    assert embedded.find(folder) is None
    assert embedded.start(folder) is not None
    status = embedded.status(folder)
    assert status is not None
    assert status.keys == 0


def test_reset_without_any_data_folder_does_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "none"
    done = aqless("server", "reset", "--folder", str(missing))
    assert done.returncode == 0, done.stderr
    assert "no embedded server data" in done.stdout
    assert not missing.exists()
