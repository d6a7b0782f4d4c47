"""Issue 20, item 3: a drain through a slow, lossy network (tests.faults.netem), 50 ms ± 25 ms
each way, 1% of chunks resetting their connection, some stalls longer than a heartbeat's
patience. Nothing is lost; a job runs twice only after its lock was taken away; and no run of
a job's code goes on past the loss of its lock for more than one renewal interval (a third of
the lock). ``benchmarks/slow_network.py`` runs the same with 5,000 jobs."""

from __future__ import annotations

import pytest

from tests.faults.netem import Conditions
from tests.faults.slow_drain import Run, overruns, slow_drain

pytestmark = [pytest.mark.faults, pytest.mark.timeout(180)]

#: The issue's network: 50 ± 25 ms, 1% resets, and a 1.5 s stall in every 500 chunks.
SLOW = Conditions(
    delay=0.05, jitter=0.025, reset_chance=0.01, stall_chance=0.002, stall_seconds=1.5, seed=20
)


async def test_500_jobs_drain_through_a_slow_lossy_network() -> None:
    drain = await slow_drain(500, SLOW)
    print(f"\n{drain}")  # noqa: T201  # the figures, shown with -s or on failure
    assert drain.report.lost == [], f"{len(drain.report.lost)} lost: {drain.report.lost[:10]}"
    assert drain.report.violations == []
    assert drain.report.strangers == 0
    assert drain.tally.resets >= 5, "the network reset too few connections to test anything"
    assert drain.report.duplicates <= drain.lock_losses, drain
    assert max(drain.overruns, default=0.0) <= drain.renewal, drain


#: The same, with stalls longer than the lock (4 s of 3 s): locks are lost while jobs run.
STALLING = Conditions(
    delay=0.05, jitter=0.025, reset_chance=0.01, stall_chance=0.01, stall_seconds=4.0, seed=7
)


async def test_stalls_longer_than_the_lock_cost_duplicates_only_after_lock_losses() -> None:
    drain = await slow_drain(500, STALLING)
    print(f"\n{drain}")  # noqa: T201
    assert drain.report.lost == [], f"{len(drain.report.lost)} lost: {drain.report.lost[:10]}"
    assert drain.report.violations == []
    assert drain.tally.stalls >= 5
    assert drain.report.duplicates <= drain.lock_losses, drain
    assert max(drain.overruns, default=0.0) <= drain.renewal, drain


#: The same network resetting three times as often: a one-slot drain carries fewer chunks.
RESETTING = Conditions(delay=0.05, jitter=0.025, reset_chance=0.03, seed=33)


async def test_one_slot_workers_with_two_pops_on_their_way_lose_nothing_to_resets() -> None:
    """Prefetching one-slot workers keep two pops on their way, each counting the outcomes
    ahead of it on the connection: connections reset under them lose no job, and a job
    runs twice only after its lock was taken away."""
    drain = await slow_drain(200, RESETTING, concurrency=1, prefetch=1, longest=0.2)
    print(f"\n{drain}")  # noqa: T201
    assert drain.report.lost == [], f"{len(drain.report.lost)} lost: {drain.report.lost[:10]}"
    assert drain.report.violations == []
    assert drain.report.strangers == 0
    assert drain.tally.resets >= 3, "the network reset too few connections to test anything"
    assert drain.report.duplicates <= drain.lock_losses, drain


def test_an_overrun_is_the_time_a_run_went_on_past_its_lost_lock() -> None:
    runs = [
        Run("a", "w1", started=10.0, ended=14.5),  # lost at 12 (and again at 20): 2.5 s on
        Run("a", "w2", started=12.1, ended=13.0),  # the run after the loss: none
        Run("b", "w1", started=10.0, ended=11.0),  # ended before its lock went at 11.5
    ]
    assert overruns(runs, {"a": [20.0, 12.0], "b": [11.5]}) == [2.5]
