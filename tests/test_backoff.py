"""The one backoff rule (aqless._concurrency.backoff): doubling, capped, jittered."""

from __future__ import annotations

import pytest

from aqless._concurrency.backoff import Delays, apart


def test_no_wait_before_any_failure() -> None:
    assert Delays(0.1, 5.0).after(0) == 0.0


@pytest.mark.parametrize("failures", [1, 2, 3, 4])
def test_waits_double_and_are_jittered_between_half_and_all(failures: int) -> None:
    ceiling = 0.1 * 2 ** (failures - 1)
    waits = [Delays(0.1, 5.0).after(failures) for _ in range(200)]
    assert all(ceiling / 2 <= wait <= ceiling for wait in waits)
    assert len(set(waits)) > 100, "jittered: a fleet does not retry in lockstep"


def test_waits_stop_growing_at_the_cap_however_many_failures() -> None:
    for failures in (7, 100, 10**6):
        assert 2.5 <= Delays(0.1, 5.0).after(failures) <= 5.0


def test_idle_ticks_come_within_the_interval_and_apart() -> None:
    """An idle worker's poll and offer renewal: never later than `interval`, and spread, so
    a fleet started together does not reach the server in one burst every interval."""
    ticks = [apart(5.0) for _ in range(200)]
    assert all(3.75 <= tick <= 5.0 for tick in ticks)
    assert len(set(ticks)) > 100
