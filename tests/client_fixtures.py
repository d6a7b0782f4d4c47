"""Fixtures for the tests of the client API; a test module loads them with
``pytest_plugins = ["tests.client_fixtures"]``.

- ``client``: an open Client on a flushed server, on the real clock.
- ``clock`` and ``timed_client``: a Client whose time only moves when the test says so, so
  lock expiry, schedules and statistics are tested without sleeping.
- ``counted``: a Client whose connections count their round trips.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

import aqless
from tests.client_helpers import WORKER, Counted, CountingConnection, ManualClock, RoundTrips
from tests.deployments import Deployment


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
    """A client (on `clock`) over a redis client that counts its round trips; the
    connection is made, and the protocol loaded, before the count starts."""
    assert server_url.startswith("unix://"), "the test servers listen on unix sockets"
    round_trips = RoundTrips()
    pool = aioredis.ConnectionPool(
        connection_class=CountingConnection,
        path=server_url.removeprefix("unix://"),
        decode_responses=True,
        round_trips=round_trips,
    )
    redis = aioredis.Redis.from_pool(pool)
    try:
        async with aqless.Client(redis=redis, clock=clock, worker_name=WORKER) as client:
            await client.redis.flushall()
            await client.queues["warm-up"].length()  # connects and loads the protocol
            round_trips.count = 0
            yield Counted(client, round_trips)
    finally:
        await redis.aclose()
