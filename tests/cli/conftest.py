"""The CLI's tests run on Valkey 9 only (the client's tests cover Redis 7): the CLI adds no
server behaviour of its own, and its tests spawn processes, which costs time."""

from __future__ import annotations

import pytest

from tests.support.cli import Cli

CLI_SERVER = "valkey9"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        callspec = getattr(item, "callspec", None)
        server = callspec.params.get("server_url") if callspec is not None else None
        in_cli = "tests/cli/" in item.nodeid
        (dropped if in_cli and server not in (None, CLI_SERVER) else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.fixture
def run_cli(server_url: str) -> Cli:
    """Runs the CLI in-process against the test server (use with `client`, which flushes)."""
    return Cli(server_url)
