"""benchmarks/scaling.py's plumbing: the arrival patterns, a replay against a real worker
with readings of the recommendation, the sweep and the table. The run here is tiny: it
proves the wiring, it measures nothing."""

from __future__ import annotations

import math
from collections.abc import Iterator

import anyio
import pytest

from benchmarks import scaling
from tests.support import servers

pytestmark = pytest.mark.timeout(90)

TINY = scaling.Settings(rate=20, run_ms=20, target=1.0, seconds=1.0, every=0.2, window=0.4)


@pytest.fixture
def own_valkey() -> Iterator[str]:
    """A server of the test's own: the benchmark deletes its namespace's keys."""
    with servers.valkey9() as url:
        yield url


def test_the_patterns_follow_their_rates_and_replay_identically() -> None:
    settings = scaling.Settings(rate=100, seconds=20)
    steady = scaling.arrivals("steady", settings)
    assert steady == scaling.arrivals("steady", settings)
    assert 1700 < len(steady) < 2300  # about 100 a second
    assert steady == sorted(steady)
    assert all(0 <= t < 20 for t in steady)
    burst = scaling.arrivals("burst", settings)
    inside = sum(1 for t in burst if 7 <= t < 13)
    assert inside > len(burst) - inside  # 3x the rate for 30% of the time
    day = scaling.rate_of("diurnal", 100, 20)
    assert day(0) == pytest.approx(20)
    assert day(10) == pytest.approx(180)
    with pytest.raises(ValueError, match="no pattern"):
        scaling.rate_of("weekly", 1, 1)


def test_the_run_times_are_known() -> None:
    fixed = scaling.Settings(run_ms=40, fixed=True)
    assert scaling.run_times(3, fixed) == [0.04] * 3
    random = scaling.run_times(2000, scaling.Settings(run_ms=40))
    assert sum(random) / len(random) == pytest.approx(0.04, rel=0.1)


def test_a_tiny_run_reads_a_recommendation_and_finds_the_slots_that_met_the_target(
    own_valkey: str,
) -> None:
    outcome = anyio.run(lambda: scaling.measure(own_valkey, "steady", TINY))
    assert outcome.jobs == len(scaling.arrivals("steady", TINY)) > 0
    assert outcome.recommended >= 1
    assert outcome.needed >= 1
    assert all(not math.isinf(p95) for p95 in outcome.p95_by_slots.values())
    table = scaling.table([outcome], TINY)
    assert "| steady |" in table
    assert "recommended (peak)" in table
