"""The fixture of the sharded deployments' tests: a real three-primary Valkey Cluster, one
for the session (each test opens a deployment of its own name). Test modules load it with
``pytest_plugins = ["tests.support.sharding_fixtures"]``; tests/support/sharding.py opens
deployments on it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.faults.cluster import Cluster, valkey_cluster


@pytest.fixture(scope="session")
def cluster() -> Iterator[Cluster]:
    with valkey_cluster() as running:
        yield running
