"""Issue 39's long partition run (``nox -s faults_long``, marker ``faults_long``; never in the
default run): three workers without a supervisor drain jobs while the network is cut 20 times
for 3 to 10 s (seed 39). Every worker must be alive at the end, every job complete or failed
as planned, none stuck; it prints the figures (``AQLESS_PARTITIONS`` changes the count)."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from tests.faults.harness import own_server
from tests.faults.test_partitions import assert_kept, partitions

pytestmark = [pytest.mark.faults_long, pytest.mark.timeout(3600)]

CUTS = int(os.environ.get("AQLESS_PARTITIONS", "20"))


async def test_20_partitions_of_3_to_10_s_against_3_workers(tmp_path: Path) -> None:
    chance = random.Random(39)  # noqa: S311  # how long each cut lasts, not a secret
    cuts = [round(chance.uniform(3, 10), 1) for _ in range(CUTS)]
    with own_server() as server:
        # jobs that run through the cuts (15 slots, 0.3 s a job: up to 50 jobs/s linked)
        jobs = int(sum(cuts) * 10)
        outcome = await partitions(server.url, tmp_path, cuts, jobs=jobs, settle_within=300)
    assert_kept(outcome)
