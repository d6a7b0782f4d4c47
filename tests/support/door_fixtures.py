"""The fixtures of the doors' tests (tests/test_doors_*.py): a plain blocking client on a
flushed server, a sharded one on the session's Cluster (with
``tests.support.sharding_fixtures``), and what every server holds, to tell that a refusal
wrote nothing."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator

import pytest
import redis

import aqless
import aqless.sync
from tests.faults.cluster import Cluster
from tests.support.job_doors import dumped
from tests.support.sharding import addresses


@pytest.fixture
def plain(server_url: str) -> Iterator[aqless.sync.Client]:
    with redis.Redis.from_url(server_url) as connection:
        connection.flushall()
    with aqless.sync.Client(server_url, worker_name="doors") as client:
        yield client


@pytest.fixture
def sharded(cluster: Cluster) -> Iterator[aqless.sync.ShardedClient]:
    name = f"doors{uuid.uuid4().hex[:8]}"
    with aqless.sync.ShardedClient(
        addresses(cluster), deployment=name, shards=3, worker_name="doors"
    ) as client:
        client.call(lambda opened: opened.current_map())  # opened: the map is written
        yield client


#: The operators' audit log records each dashboard action, refused ones too (aqless.ops).
AUDIT = b"ql:aqless:audit"


@pytest.fixture
def servers(server_url: str, cluster: Cluster) -> Iterator[Callable[[], object]]:
    """What the plain server and the cluster's nodes hold (the audit log aside)."""
    with contextlib.ExitStack() as stack:
        plain = stack.enter_context(redis.Redis.from_url(server_url, socket_timeout=30))
        nodes = [
            stack.enter_context(redis.Redis(port=port, socket_timeout=30)) for port in cluster.ports
        ]

        def held() -> object:
            kept = {key: plain.dump(key) for key in plain.keys("*") if key != AUDIT}
            return kept, dumped(nodes)

        yield held
