"""Retention amortized (docs/protocol/CORE.md 5.7): the purge of completed jobs runs at the
first completion in each second of the client's clock, and after every 1% of
jobs-history-count completions within one; the overshoot's bounds, exactly, on the client's
manual clock."""

from __future__ import annotations

import aqless
from tests.support.clients import ManualClock, pop_one

pytest_plugins = ["tests.support.client_fixtures"]

LIMIT = 200  # jobs-history-count: a slack of 2 jobs


async def complete_one(client: aqless.Client, jid: str) -> int:
    """Puts, pops and completes `jid` at the clock's `now`; the completed jobs kept after."""
    queue = client.queues["q"]
    await queue.put("app.Job", jid=jid)
    await (await pop_one(queue)).complete()
    return int(await client.redis.zcard("ql:completed"))


async def test_completed_jobs_pass_the_count_limit_by_at_most_one_percent(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    await timed_client.config.set("jobs-history-count", LIMIT)
    kept = [await complete_one(timed_client, f"j{k}") for k in range(1, LIMIT + 11)]
    # all in one second: the first completion purges, then every third (slack 2 + 1)
    expected, count = [], 0
    for k in range(1, LIMIT + 11):
        count += 1
        if (k - 1) % 3 == 0:
            count = min(count, LIMIT)
        expected.append(count)
    assert kept == expected
    assert max(kept) == LIMIT + 2  # the bound is reached, never passed
    clock.advance(1)  # the next second's first completion purges down to the limit
    assert await complete_one(timed_client, "next") == LIMIT
    newest = await timed_client.redis.zrange("ql:completed", -1, -1)
    assert newest == ["next"]
    assert await timed_client.redis.exists("ql:j:j1", "ql:j:j1-history") == 0


async def test_a_job_past_its_age_waits_at_most_a_second(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    start = clock.now  # a whole second
    await timed_client.config.set("jobs-history", 10)
    clock.advance(0.1)
    await complete_one(timed_client, "old")  # due at start + 10.1
    clock.advance(10 - 0.05)  # start + 10.05: a new second's purge, "old" not due yet
    await complete_one(timed_client, "a")
    clock.advance(0.9)  # start + 10.95: due, but this second's purge has run
    await complete_one(timed_client, "b")
    assert (await timed_client.redis.zscore("ql:completed", "old")) == start + 0.1
    assert await timed_client.jobs.get("old") is not None
    clock.advance(0.05)  # start + 11: the next second, 0.9 s past due
    await complete_one(timed_client, "c")
    assert await timed_client.redis.zrange("ql:completed", 0, -1) == ["a", "b", "c"]
    assert await timed_client.jobs.get("old") is None


async def test_no_slack_purges_at_every_completion_as_the_reference(
    timed_client: aqless.Client,
) -> None:
    # below 100 jobs 1% is no job; jobs-history 0 keeps no job: each completion purges
    await timed_client.config.set("jobs-history-count", 5)
    kept = [await complete_one(timed_client, f"j{k}") for k in range(8)]
    assert kept == [1, 2, 3, 4, 5, 5, 5, 5]
    await timed_client.config.set("jobs-history", 0)
    assert [await complete_one(timed_client, f"n{k}") for k in range(3)] == [0, 0, 0]
    assert await timed_client.redis.keys("ql:j:*") == []


async def test_a_lower_count_limit_applies_at_the_next_completion(
    timed_client: aqless.Client,
) -> None:
    await timed_client.config.set("jobs-history-count", LIMIT)
    for k in range(LIMIT + 2):
        await complete_one(timed_client, f"j{k}")
    await timed_client.config.set("jobs-history-count", 150)  # by any client: read per call
    assert await complete_one(timed_client, "last") == 150


async def test_a_clock_in_another_second_purges_and_the_marker_keeps_one_field(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    start = clock.now
    await timed_client.config.set("jobs-history", 10)
    await complete_one(timed_client, "old")  # due at start + 10
    clock.advance(11.2)
    await complete_one(timed_client, "a")  # purges "old"
    assert await timed_client.redis.hgetall("ql:aqless:retention") == {str(int(start) + 11): "1"}
    await complete_one(timed_client, "b")
    await complete_one(timed_client, "c")
    await timed_client.redis.zadd("ql:completed", {"stale": start})  # another client's job
    clock.now = start + 10.9  # a client whose clock is behind: its second purges too
    await complete_one(timed_client, "d")
    assert await timed_client.redis.zrange("ql:completed", 0, -1) == ["d", "a", "b", "c"]
    assert await timed_client.redis.hgetall("ql:aqless:retention") == {str(int(start) + 10): "1"}
