"""Opening a sharded deployment on the tests' cluster (tests/sharded_fixtures.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import aqless
from tests.faults.cluster import Cluster


def addresses(cluster: Cluster) -> list[tuple[str, int]]:
    return [("127.0.0.1", port) for port in cluster.ports]


def cluster_url(cluster: Cluster) -> str:
    return "redis+cluster://" + ",".join(f"127.0.0.1:{port}" for port in cluster.ports)


@asynccontextmanager
async def deployment(
    cluster: Cluster, name: str, shards: int | None = 3
) -> AsyncIterator[aqless.ShardedClient]:
    async with aqless.ShardedClient(addresses(cluster), deployment=name, shards=shards) as client:
        yield client
