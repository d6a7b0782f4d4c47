"""Rate limits through the client, on its clock: a smooth limit spreads its starts so that
no second holds more than the limit, where a burst limit starts its whole limit at once."""

from __future__ import annotations

import bisect

import pytest

import aqless
from aqless import InvalidArgumentError, PutRequest
from tests.support.clients import ManualClock

pytest_plugins = ["tests.support.client_fixtures"]

STEP = 0.005  # the client's clock moves this much between pops


def most_in_a_second(starts: list[float]) -> int:
    """The most starts in any window of one second, both ends counted."""
    ordered = sorted(starts)
    return max(bisect.bisect_right(ordered, t + 1.0) - i for i, t in enumerate(ordered))


async def pop_for(client: aqless.Client, clock: ManualClock, seconds: float) -> list[float]:
    """The clock's time at each start of a worker popping up to 10 jobs every STEP."""
    starts: list[float] = []
    end = clock.now + seconds
    while clock.now < end:
        starts += [clock.now] * len(await client.queues["q"].pop_many(10))
        clock.advance(STEP)
    return starts


@pytest.mark.parametrize("named", [False, True], ids=["queue", "named"])
async def test_no_second_holds_more_than_a_smooth_limit(
    timed_client: aqless.Client, clock: ManualClock, named: bool
) -> None:
    client = timed_client
    if named:
        await client.rate_limits["api"].set(50, per=1, smooth=True)
    else:
        await client.queues["q"].set_rate_limit(50, per=1, smooth=True)
    names = ["api"] if named else None
    await client.queues["q"].put_many([PutRequest("app.Call", rate_limits=names)] * 300)
    starts = await pop_for(client, clock, 4)
    assert most_in_a_second(starts) <= 50
    assert 190 <= len(starts) <= 200  # the limit is used, one start every 20 ms
    info = await (client.rate_limits["api"] if named else client.queues["q"].rate_limit).get()
    assert (info.limit, info.period, info.smooth) == (50, 1.0, True)


async def test_a_burst_limit_starts_its_limit_at_once(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    queue = timed_client.queues["q"]
    await queue.set_rate_limit(50, per=1)
    assert not (await queue.rate_limit.get()).smooth
    await queue.put_many([PutRequest("app.Call")] * 300)
    starts = [clock.now] * len(await queue.pop_many(100))
    clock.advance(1)
    starts += [clock.now] * len(await queue.pop_many(100))
    assert most_in_a_second(starts) == 100  # documented: 50 at each end of one second


async def test_smooth_must_be_a_bool(client: aqless.Client) -> None:
    with pytest.raises(InvalidArgumentError, match="smooth"):
        await client.rate_limits["api"].set(5, smooth="yes")  # type: ignore[arg-type]
