"""Scaling signals: the M/M/c model against known Erlang C values, the histogram's
percentiles, the window of readings, and a queue's signals read from a real server."""

from __future__ import annotations

import dataclasses
import math

import pytest

import aqless
from aqless.errors import InvalidArgumentError
from aqless.models import Durations
from aqless.scaling import (
    BACKLOG_DRAIN,
    QueueScaling,
    ScalingWindow,
    erlang_c,
    histogram_quantile,
    slots_for,
    wait_quantile,
)
from aqless.scaling.erlang import MOST_SLOTS
from tests.support.clients import ManualClock

pytest_plugins = ["tests.support.client_fixtures"]

DAY = 86400.0

# -- the model ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("slots", "load", "expected"),
    [
        (1, 0.7, 0.7),  # M/M/1: a job waits with probability rho
        (2, 1.0, 1 / 3),  # M/M/2 at rho 0.5: 2 rho^2 / (1 + rho)
        (11, 10.0, 0.6821),  # the textbook table: 10 erlangs on 11 agents
        (50, 45.0, 0.3639),
    ],
)
def test_erlang_c_matches_known_values(slots: int, load: float, expected: float) -> None:
    assert erlang_c(slots, load) == pytest.approx(expected, abs=5e-5)


@pytest.mark.parametrize(("slots", "load"), [(3, 2.5), (20, 17.3), (120, 100.0)])
def test_erlang_c_matches_its_closed_form(slots: int, load: float) -> None:
    waiting_term = load**slots / math.factorial(slots) * slots / (slots - load)
    idle_terms = sum(load**k / math.factorial(k) for k in range(slots))
    assert erlang_c(slots, load) == pytest.approx(waiting_term / (idle_terms + waiting_term))


def test_erlang_c_at_the_edges() -> None:
    assert erlang_c(4, 0) == 0
    assert erlang_c(4, 4) == 1  # the slots cannot keep up
    assert erlang_c(4, 9) == 1
    with pytest.raises(InvalidArgumentError):
        erlang_c(0, 1)
    with pytest.raises(InvalidArgumentError):
        erlang_c(2, math.nan)


def test_the_wait_quantile_of_an_m_m_1_queue() -> None:
    # P(wait > t) = rho exp(-(mu - lambda) t): rho 0.5, mu - lambda 0.5 per second
    assert wait_quantile(1, 0.5, 1.0, 0.95) == pytest.approx(2 * math.log(10))
    assert wait_quantile(1, 0.5, 1.0, 0.5) == 0  # half the jobs do not wait at all
    assert wait_quantile(1, 1.0, 1.0) == math.inf


def test_slots_for_is_the_fewest_that_meet_the_target() -> None:
    for rate, service, target in [(100, 0.05, 2.0), (100, 0.05, 0.01), (3, 1.0, 1.0), (0.1, 30, 5)]:
        slots = slots_for(rate, service, target)
        assert wait_quantile(slots, rate, service) <= target
        if slots > 1:
            assert wait_quantile(slots - 1, rate, service) > target
    assert slots_for(100, 0.05, 2.0) == 6  # 5 erlangs: 5 slots never catch up, 6 do
    assert slots_for(0, 0.05, 2.0) == 0
    with pytest.raises(InvalidArgumentError):
        slots_for(1, -1, 2.0)


# -- the histogram's percentiles -----------------------------------------------------------------


def histogram(counts: dict[int, int]) -> tuple[int, ...]:
    return tuple(counts.get(index, 0) for index in range(148))


def test_histogram_quantiles_are_bucket_ends_or_the_markov_bound() -> None:
    waits = Durations(count=100, mean=20.0, std=1.0, histogram=histogram({3: 50, 10: 45, 61: 5}))
    assert histogram_quantile(waits, 0.5) == 4.0  # the 3-second bucket ends at 4 s
    assert histogram_quantile(waits, 0.95) == 11.0
    assert histogram_quantile(waits, 0.99) == 180.0  # the 2-minute bucket ends at 3 min
    quick = Durations(count=10, mean=0.01, std=0.0, histogram=histogram({0: 10}))
    assert histogram_quantile(quick, 0.95) == pytest.approx(0.2)  # mean / 0.05 < 1 s
    hours = Durations(count=1, mean=7200.0, std=0.0, histogram=histogram({120: 1}))
    assert histogram_quantile(hours, 0.5) == 3 * 3600.0
    nothing = Durations(count=0, mean=0.0, std=0.0, histogram=histogram({}))
    assert histogram_quantile(nothing, 0.95) is None


# -- the record and the window -------------------------------------------------------------------


def reading(at: float, completed: int, *, waiting: int = 0) -> QueueScaling:
    base = QueueScaling(
        queue="q",
        at=at,
        waiting=waiting,
        running=0,
        oldest_wait=0.0,
        wait_p50=None,
        wait_p95=None,
        run_mean=0.05,
        completed=completed,
        window=0.0,
        throughput=0.0,
        arrival_rate=0.0,
        target_p95=2.0,
        slots=0,
        predicted_p95=None,
        utilization=0.0,
    )
    return base.since(None)


def test_without_an_earlier_reading_the_throughput_is_the_day_s_average() -> None:
    noon = 100 * DAY + DAY / 2
    first = reading(noon, 4320)
    assert first.window == DAY / 2
    assert first.throughput == pytest.approx(6.0)  # 4320 in 720 minutes


def test_an_earlier_reading_of_the_day_narrows_the_throughput() -> None:
    noon = 100 * DAY + DAY / 2
    later = reading(noon + 60, 4320 + 6000).since(reading(noon, 4320))
    assert (later.window, later.throughput) == (60, 6000)
    assert later.arrival_rate == pytest.approx(100)
    assert later.slots == slots_for(100, 0.05, 2.0)
    assert later.predicted_p95 is not None
    assert later.predicted_p95 <= 2.0
    assert later.utilization == pytest.approx(100 * 0.05 / later.slots)
    # yesterday's reading cannot serve: the day's counts started over
    assert reading(noon + DAY, 10).since(reading(noon, 4320)).window == DAY / 2


def test_jobs_waiting_beyond_the_target_add_to_the_arrival_rate() -> None:
    noon = 100 * DAY + DAY / 2
    backed_up = reading(noon + 60, 6000, waiting=1200).since(reading(noon, 0, waiting=0))
    # 100 jobs a second may leave 200 waiting under a 2 s target: the other 1000 drain
    assert backed_up.arrival_rate == pytest.approx(100 + 1000 / BACKLOG_DRAIN)


def test_a_target_past_the_most_slots_recommends_slots_that_keep_up() -> None:
    """A backlog whose target needs more than MOST_SLOTS slots is a reading (the fewest that
    keep up, at least MOST_SLOTS, and the wait they give), not a refusal."""
    noon = 100 * DAY + DAY / 2
    for load, slots in ((MOST_SLOTS - 0.5, MOST_SLOTS), (122_627.5, 122_628)):
        backlog = dataclasses.replace(
            reading(noon, 0), run_mean=8.0, waiting=round(load / 8.0 * BACKLOG_DRAIN)
        )
        flooded = backlog.since(None)
        assert flooded.slots == slots
        assert flooded.predicted_p95 is not None
        assert 2.0 < flooded.predicted_p95 < math.inf  # the target missed, the wait finite


def test_a_window_takes_the_throughput_over_about_its_length() -> None:
    window = ScalingWindow(60)
    start = 100 * DAY
    first = window.update(reading(start, 0))
    assert first.window == start % DAY or first.window == 0
    assert window.update(reading(start + 30, 300)).window == 30  # the oldest kept
    assert window.update(reading(start + 70, 700)).window == 70
    latest = window.update(reading(start + 130, 1300))
    assert (latest.window, latest.throughput) == (60, 600)  # from the reading at +70
    with pytest.raises(InvalidArgumentError):
        ScalingWindow(0)


# -- a queue's signals from the server -----------------------------------------------------------


async def test_a_queue_s_scaling_signals(timed_client: aqless.Client, clock: ManualClock) -> None:
    queue = timed_client.queues["q"]
    nothing = await queue.scaling(2.0)
    assert (nothing.waiting, nothing.slots, nothing.completed) == (0, 0, 0)
    assert nothing.wait_p95 is None
    assert nothing.run_mean is None

    for _ in range(4):
        await queue.put("app.Job")
    clock.advance(3.5)
    jobs = await queue.pop_many(2)  # waited 3.5 s
    clock.advance(2)
    for job in jobs:
        await job.complete()  # ran 2 s
    before = await queue.scaling(2.0)
    assert (before.waiting, before.running, before.completed) == (2, 0, 2)
    assert before.oldest_wait == pytest.approx(5.5)
    assert before.run_mean == pytest.approx(2.0)
    assert before.wait_p50 == 4.0  # the 3-second bucket
    assert before.slots >= 1

    clock.advance(10)
    await queue.put("app.Job")
    jobs = await queue.pop_many(3)
    clock.advance(2)
    for job in jobs:
        await job.complete()
    after = await queue.scaling(2.0, previous=before)
    assert (after.waiting, after.completed) == (0, 5)
    assert after.window == pytest.approx(12)
    assert after.throughput == pytest.approx(3 / 12 * 60)
    # 0.25 jobs a second of 2 s each: half an erlang
    assert after.slots == slots_for(0.25, 2.0, 2.0)
    assert after.as_dict()["slots"] == after.slots


async def test_every_queue_s_scaling_signals(client: aqless.Client) -> None:
    await client.queues["a"].put("app.Job")
    await client.queues["b"].put("app.Job")
    first = await client.queues.scaling(1.0)
    assert sorted(reading.queue for reading in first) == ["a", "b"]
    assert all(reading.slots == 1 for reading in first)  # waiting, run time unknown
    again = await client.queues.scaling(1.0, previous=first)
    assert all(reading.window < 60 for reading in again)


@pytest.mark.parametrize("target", [0, -1, math.inf, math.nan, "2", True])
async def test_a_target_that_is_not_a_positive_duration_is_refused(
    client: aqless.Client, target: object
) -> None:
    with pytest.raises(InvalidArgumentError, match="target_p95"):
        await client.queues["q"].scaling(target)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="target_p95"):
        await client.queues.scaling(target)  # type: ignore[arg-type]
