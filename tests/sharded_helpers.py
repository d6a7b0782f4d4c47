"""Shared by the tests of sharded deployments (tests/test_sharded*.py): the module-scoped
three-primary cluster (import `cluster_fixture` into a test module: tests then ask for
`cluster`), a deployment on it,
and keys that fall on a given shard."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from redis.crc import key_slot

import aqless
from tests.faults.cluster import Cluster, valkey_cluster


@pytest.fixture(scope="module", name="cluster")
def cluster_fixture() -> Iterator[Cluster]:
    with valkey_cluster() as running:
        yield running


def addresses(cluster: Cluster) -> list[tuple[str, int]]:
    return [("127.0.0.1", port) for port in cluster.ports]


@asynccontextmanager
async def deployment(
    cluster: Cluster, name: str, shards: int | None = 3, **options: Any
) -> AsyncIterator[aqless.ShardedClient]:
    async with aqless.ShardedClient(
        addresses(cluster), deployment=name, shards=shards, **options
    ) as client:
        yield client


def home_port(cluster: Cluster, namespace: str) -> int:
    return cluster.port_for_slot(key_slot(f"{namespace}:ql:".encode()))


def keys_of_a_shard(client: aqless.ShardedClient, shard: int, prefix: str = "") -> list[str]:
    """Keys (or strings) that fall on `shard`: a routing key's owner is its bucket's."""
    found = (f"{prefix}{n}" for n in range(10_000))
    return [key for key in found if client.shard_of(key) == shard]
