"""A server whose maxmemory-policy evicts keys may delete jobs: a client warns when it opens,
a worker when it starts, and a strict client or aqless-run refuses."""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Callable, Iterator

import pytest
import redis

import aqless
from aqless._connection.server_checks import FIX, policies

EVICTING = "allkeys-lru"


def set_policy(url: str, policy: str) -> str:
    """Set the server's maxmemory-policy; the one it had."""
    with redis.Redis.from_url(url, decode_responses=True) as connection:
        before = str(connection.config_get("maxmemory-policy")["maxmemory-policy"])
        connection.config_set("maxmemory-policy", policy)
    return before


@pytest.fixture
def policy(server_url: str) -> Iterator[Callable[[str], None]]:
    """``policy(name)`` sets the server's maxmemory-policy until the test ends, on an empty
    server: the workers below pop "q", which another test may have left jobs (or a recurring
    job far behind the clock) in."""
    with redis.Redis.from_url(server_url) as connection:
        connection.flushall()
    original: list[str] = []

    def change(name: str) -> None:
        before = set_policy(server_url, name)
        original[:] = original or [before]

    yield change
    if original:
        set_policy(server_url, original[0])


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        record.getMessage()
        for record in caplog.records
        if record.name == "aqless._connection.server_checks" and record.levelno == logging.WARNING
    ]


async def test_a_client_warns_once_when_it_opens_on_an_evicting_server(
    server_url: str, policy: Callable[[str], None], caplog: pytest.LogCaptureFixture
) -> None:
    policy(EVICTING)
    caplog.set_level(logging.WARNING, logger="aqless")
    async with aqless.Client(server_url) as client:
        await client.open()  # opened again: no second warning
        worker = aqless.Worker(client, ["q"], handlers=aqless.Handlers(), burst=True)
        await worker.run()  # the worker of a checked client: no second warning either
    [warning] = warnings(caplog)
    assert f"maxmemory-policy {EVICTING}" in warning
    assert FIX in warning


async def test_a_worker_warns_when_it_starts_on_an_evicting_server(
    server_url: str, policy: Callable[[str], None], caplog: pytest.LogCaptureFixture
) -> None:
    policy(EVICTING)
    caplog.set_level(logging.WARNING, logger="aqless")
    client = aqless.Client(server_url)  # never opened: the worker checks
    try:
        await aqless.Worker(client, ["q"], handlers=aqless.Handlers(), burst=True).run()
    finally:
        await client.close()
    [warning] = warnings(caplog)
    assert f"maxmemory-policy {EVICTING}" in warning


async def test_a_strict_client_and_its_worker_refuse_an_evicting_server(
    server_url: str, policy: Callable[[str], None]
) -> None:
    policy(EVICTING)
    with pytest.raises(aqless.ConfigurationError, match=f"maxmemory-policy {EVICTING}"):
        async with aqless.Client(server_url, strict=True):
            pass
    client = aqless.Client(server_url, strict=True)
    try:
        worker = aqless.Worker(client, ["q"], handlers=aqless.Handlers(), burst=True)
        with pytest.raises(aqless.ConfigurationError, match=FIX):
            await worker.run()
    finally:
        await client.close()


@pytest.mark.parametrize("name", ["noeviction", "volatile-lru", "volatile-ttl"])
async def test_policies_that_keep_our_keys_say_nothing(
    server_url: str, policy: Callable[[str], None], caplog: pytest.LogCaptureFixture, name: str
) -> None:
    policy(name)
    caplog.set_level(logging.DEBUG, logger="aqless")
    async with aqless.Client(server_url, strict=True) as client:
        await aqless.Worker(client, ["q"], handlers=aqless.Handlers(), burst=True).run()
    assert not warnings(caplog)
    assert "could not be checked" not in caplog.text


async def test_a_server_that_refuses_info_is_not_checked_and_says_so_at_debug_level(
    server_url: str, policy: Callable[[str], None], caplog: pytest.LogCaptureFixture
) -> None:
    policy(EVICTING)
    caplog.set_level(logging.DEBUG, logger="aqless")
    with redis.Redis.from_url(server_url) as admin:
        admin.acl_setuser(
            "no-info", enabled=True, passwords=["+pw"], keys=["*"], channels=["*"],
            commands=["+@all", "-info"],
        )  # fmt: skip
    try:
        no_info = aqless.Client(
            server_url,
            username="no-info",
            password="pw",  # noqa: S106 -- a throwaway user of a private test server
            strict=True,
        )
        async with no_info:
            pass
    finally:
        with redis.Redis.from_url(server_url) as admin:
            admin.acl_deluser("no-info")
    assert not warnings(caplog)
    [unchecked] = [r for r in caplog.records if "could not be checked" in r.getMessage()]
    assert unchecked.levelno == logging.DEBUG


def test_the_policy_is_read_from_every_node_of_a_cluster() -> None:
    nodes = {
        "10.0.0.1:7000": {"maxmemory_policy": "noeviction", "used_memory": 1},
        "10.0.0.2:7000": {"maxmemory_policy": "allkeys-lfu"},
    }
    assert policies(nodes) == {"noeviction", "allkeys-lfu"}
    assert policies({"maxmemory_policy": "volatile-lru"}) == {"volatile-lru"}


def aqless_run(url: str, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "aqless.run", "--url", url, "q", "--burst", *arguments],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("arguments", [(), ("--check",), ("--processes", "2")])
def test_aqless_run_refuses_an_evicting_server(
    server_url: str, policy: Callable[[str], None], arguments: tuple[str, ...]
) -> None:
    policy(EVICTING)
    result = aqless_run(server_url, *arguments)
    assert result.returncode == 2, result.stderr
    assert f"maxmemory-policy {EVICTING}" in result.stderr
    assert FIX in result.stderr
    assert "Traceback" not in result.stderr


def test_aqless_run_starts_with_allow_eviction_and_warns(
    server_url: str, policy: Callable[[str], None]
) -> None:
    policy(EVICTING)
    result = aqless_run(server_url, "--allow-eviction")
    assert result.returncode == 0, result.stderr
    assert f"maxmemory-policy {EVICTING}" in result.stderr
    policy("noeviction")
    result = aqless_run(server_url)
    assert result.returncode == 0, result.stderr
    assert "maxmemory-policy" not in result.stderr
