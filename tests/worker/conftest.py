"""Fixtures for the worker's tests: a client on a clean server, and a worker running in a
task of the test's own event loop (see tests/support/worker.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

import aqless
from tests.support.deployments import Deployment
from tests.support.worker import WORKER


@pytest.fixture
async def client(deployment: Deployment) -> AsyncIterator[aqless.Client]:
    """An open client on a clean deployment; its worker name is the workers' name."""
    async with deployment.open_client(worker_name=WORKER) as client:
        await deployment.flush()
        yield client


@pytest.fixture
async def other(deployment: Deployment) -> AsyncIterator[aqless.Client]:
    """A second client, as another worker (or a producer) would use."""
    async with deployment.open_client(worker_name="other-worker") as client:
        yield client
