"""Fixtures and helpers of the seed tests for qless-perl's and reqless-py's READMEs
(test_perl_readme.py, test_reqless_py_readme.py import what they use from here).

- ``client`` (from tests.support.client_fixtures, loaded by the modules): an open client on a
  flushed server, on the real clock; ``clock`` and ``timed_client``: one on a clock the test
  moves (worker ``worker-1``).
- ``timed_other``: a second client on the same clock, as another worker (``worker-2``),
  with no grace period, so that a lock that expired is taken at the next pop.
- ``other``: a second client on the real clock (worker ``other-worker``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

import aqless
from tests.support.clients import ManualClock

OTHER_WORKER = "worker-2"


@pytest.fixture(name="timed_other")
async def timed_other_fixture(
    timed_client: aqless.Client, server_url: str, clock: ManualClock
) -> AsyncIterator[aqless.Client]:
    """Another worker on `timed_client`'s server and clock; expired locks are reclaimed at
    the next pop (``grace-period`` 0)."""
    async with aqless.Client(server_url, clock=clock, worker_name=OTHER_WORKER) as other:
        await other.config.set("grace-period", 0)
        yield other


@pytest.fixture(name="other")
async def other_fixture(client: aqless.Client, server_url: str) -> AsyncIterator[aqless.Client]:
    """A second client on the real clock, as another worker would use."""
    async with aqless.Client(server_url, worker_name="other-worker") as other:
        yield other
