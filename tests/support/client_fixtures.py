"""Fixtures for the tests of the client API; a test module loads them with
``pytest_plugins = ["tests.support.client_fixtures"]``.

- ``client``: an open Client on a flushed server, on the real clock.
- ``clock`` and ``timed_client``: a Client whose time only moves when the test says so, so
  lock expiry, schedules and statistics are tested without sleeping.
- ``counted``: a Client whose lean connection counts its round trips.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

import aqless
from tests.support.clients import WORKER, Counted, ManualClock, RoundTrips
from tests.support.deployments import Deployment


@pytest.fixture
async def client(deployment: Deployment) -> AsyncIterator[aqless.Client]:
    """An open client on a clean deployment, on the real clock."""
    async with deployment.open_client() as client:
        await deployment.flush()
        yield client


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
async def timed_client(deployment: Deployment, clock: ManualClock) -> AsyncIterator[aqless.Client]:
    """An open client on a clean deployment whose `now` is `clock` (worker name
    ``worker-1``)."""
    async with deployment.open_client(clock=clock, worker_name=WORKER) as client:
        await deployment.flush()
        yield client


@pytest.fixture
async def counted(server_url: str, clock: ManualClock) -> AsyncIterator[Counted]:
    """A client (on `clock`) whose lean connection counts its round trips (each write of
    one call or of a whole pipeline); the connection is made, and the protocol loaded,
    before the count starts."""
    round_trips = RoundTrips()
    async with aqless.Client(server_url, clock=clock, worker_name=WORKER) as client:
        await client.redis.flushall()
        await client.queues["warm-up"].length()  # connects and loads the protocol
        wire = client.protocol.wire
        send = wire._send

        async def counting(packed: list[bytes], expected: int, blocks: float = 0.0) -> Any:
            round_trips.count += 1
            return await send(packed, expected, blocks)

        wire._send = counting  # type: ignore[method-assign]
        yield Counted(client, round_trips)
