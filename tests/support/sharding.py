"""Opening a sharded deployment on the tests' cluster (tests/support/sharding_fixtures.py), finding
keys that fall on a given shard, and running an example or a docs example against the
cluster."""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from redis.crc import key_slot

import aqless
from tests.faults.cluster import Cluster
from tests.support.docs import cluster_block
from tests.support.processes import run_python


def addresses(cluster: Cluster) -> list[tuple[str, int]]:
    return [("127.0.0.1", port) for port in cluster.ports]


def cluster_url(cluster: Cluster) -> str:
    return "redis+cluster://" + ",".join(f"127.0.0.1:{port}" for port in cluster.ports)


@asynccontextmanager
async def deployment(
    cluster: Cluster, name: str, shards: int | None = 3, **options: Any
) -> AsyncIterator[aqless.ShardedClient]:
    async with aqless.ShardedClient(
        addresses(cluster), deployment=name, shards=shards, **options
    ) as client:
        yield client


def home_port(cluster: Cluster, namespace: str) -> int:
    """The port of the node that held the namespace's slot when the cluster was formed."""
    return cluster.port_for_slot(key_slot(f"{namespace}:ql:".encode()))


def keys_of_a_shard(client: aqless.ShardedClient, shard: int, prefix: str = "") -> list[str]:
    """Keys (or strings) that fall on `shard`: a routing key's owner is its bucket's."""
    found = (f"{prefix}{n}" for n in range(10_000))
    return [key for key in found if client.shard_of(key) == shard]


def key_per_shard(client: aqless.ShardedClient, prefix: str = "route-") -> list[str]:
    """One key falling on each of the three shards, by shard id."""
    return [keys_of_a_shard(client, shard, prefix)[0] for shard in range(3)]


def kept_elsewhere(client: aqless.ShardedClient) -> str:
    """A queue name whose own throttle and rate-limit id (``<prefix>q:<queue>``, on the shard
    the queue is pinned to) is kept, as a name, by another shard."""
    for n in range(100):
        name = f"mail-{n}"
        pin = client.keeper_of(name)
        if client.keeper_of(f"{client.shard(pin).prefix}q:{name}") != pin:
            return name
    raise AssertionError("no such queue name")


def run_example(cluster: Cluster, name: str) -> subprocess.CompletedProcess[str]:
    """examples/<name> run against the cluster (AQLESS_CLUSTER_URL), its output captured."""
    example = Path(__file__).parent.parent.parent / "examples" / name
    return run_python(str(example), env={"AQLESS_CLUSTER_URL": cluster_url(cluster)})


#: the nodes the docs' sharded examples name, replaced by the tests' cluster's
DOCS_NODES = '[("10.0.0.1", 7000), ("10.0.0.2", 7000)]'


def run_docs_snippet(
    cluster: Cluster, runner: str, replaced: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The ``<!-- cluster -->`` example of the docs (docs/guides/sharding.md) whose first line
    says that `runner` runs it ("# needs a Cluster: <runner> runs it"), run against the cluster
    with `replaced`'s texts replaced; its output captured."""
    snippet = cluster_block(runner).code
    assert DOCS_NODES in snippet
    snippet = snippet.replace(DOCS_NODES, repr(addresses(cluster)[:2]))
    for old, new in (replaced or {}).items():
        snippet = snippet.replace(old, new)
    return run_python("-c", snippet)
