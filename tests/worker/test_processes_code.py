"""The worker processes the tests spawn run the aqless the tests import: the checkout under
test, not the one the environment's editable install points at (issue 28: from a worktree,
``python -m aqless.run`` in a temporary folder imported the main checkout, which other
engineers change while the suite runs, so the fault suite's workers ran code that was not
being tested, and whatever version the main checkout held when each one started)."""

from __future__ import annotations

import os

import pytest

import aqless
from tests.support.worker_processes import (
    Spawner,
    aq_fixture,  # noqa: F401
    count_reaches,
    listed,
    put,
    spawn_fixture,  # noqa: F401
    valkey_only_fixture,  # noqa: F401
)

pytestmark = [pytest.mark.timeout(60), pytest.mark.usefixtures("valkey_only")]

#: A job that records where its worker imported aqless from.
WHERE = """
import os

import aqless


async def run(job):
    await job.client.redis.rpush("where", os.path.realpath(aqless.__file__))
"""

#: Where this test imported it from.
UNDER_TEST = os.path.realpath(aqless.__file__)


async def test_a_spawned_worker_imports_the_aqless_under_test(
    aq: aqless.Client, spawn: Spawner
) -> None:
    (spawn.folder / "where.py").write_text(WHERE)
    await put(aq, "where.run", 1)
    spawn("-i", "where", "--interval", "1", "q")
    await count_reaches(aq, "where", 1)
    (imported,) = await listed(aq, "where")
    assert imported == UNDER_TEST
