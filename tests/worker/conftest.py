"""Fixtures for the worker's tests: a client on a clean server, and a worker running in a
task of the test's own event loop (see helpers.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

import aqless
from tests.worker.helpers import WORKER


@pytest.fixture
async def client(server_url: str) -> AsyncIterator[aqless.Client]:
    """An open client on a clean server; its worker name is the workers' name."""
    async with aqless.Client(server_url, worker_name=WORKER) as client:
        await client.redis.flushall()
        yield client


@pytest.fixture
async def other(server_url: str) -> AsyncIterator[aqless.Client]:
    """A second client, as another worker (or a producer) would use."""
    async with aqless.Client(server_url, worker_name="other-worker") as client:
        yield client
