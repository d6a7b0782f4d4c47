"""Schedules' policies on a controlled clock: each overlap policy (skip, buffer one, buffer
all, cancel the live run, allow all), the catch-up window, pause after failures in a row,
jitter, and backfill (a day at a 1-minute cron is 1,440 runs, each made once)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

import aqless
from aqless import ConfigurationError, InvalidValueError, Job, RecurringJob
from aqless.models import Overlap
from tests.support.clients import ManualClock

pytest_plugins = ["tests.support.client_fixtures"]

#: A template's interval: shorter than a lock (60 s), so a run popped stays running across
#: the due times a test moves the clock to.
EVERY = 10.0


async def template(client: aqless.Client, rjid: str = "tick") -> RecurringJob:
    found = await client.jobs.get(rjid)
    assert isinstance(found, RecurringJob)
    return found


async def at(client: aqless.Client, clock: ManualClock, when: float) -> list[Job]:
    """The jobs a pop hands out when the clock reaches `when` (the due runs spawn first)."""
    clock.now = when
    return list(await client.queues["q"].pop_many(50))


async def state(client: aqless.Client, jid: str) -> str | None:
    job = await client.jobs.get(jid)
    return None if job is None else str(job.state)  # type: ignore[union-attr]


async def recur(client: aqless.Client, overlap: Overlap | None, **options: Any) -> float:
    """Template `tick`, every `EVERY` seconds from the clock's time, with `overlap`; its
    first time."""
    start = client.clock()
    queue = client.queues["q"]
    await queue.recur("app.Tick", interval=EVERY, jid="tick", overlap=overlap, **options)
    return start


async def test_allow_all_runs_a_due_run_beside_the_live_one(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    t0 = await recur(timed_client, None)
    assert [job.jid for job in await at(timed_client, clock, t0)] == ["tick-1"]
    # tick-1 still runs: allow_all (the default) starts tick-2 beside it
    assert [job.jid for job in await at(timed_client, clock, t0 + EVERY)] == ["tick-2"]
    assert (await template(timed_client)).overlap == "allow_all"


async def test_skip_drops_a_due_run_while_the_last_one_is_live(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    t0 = await recur(timed_client, "skip")
    [first] = await at(timed_client, clock, t0)
    assert await at(timed_client, clock, t0 + EVERY) == []  # tick-1 runs: skipped
    await first.complete()
    assert [job.jid for job in await at(timed_client, clock, t0 + 2 * EVERY)] == ["tick-2"]
    found = await template(timed_client)
    assert (found.overlap, found.count, found.buffered) == ("skip", 2, 0)


async def test_skip_also_counts_a_waiting_run_as_live(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    t0 = await recur(timed_client, "skip")
    clock.now = t0 + 3 * EVERY  # four times due at once, nothing popped: one run
    assert [job.jid for job in await timed_client.queues["q"].peek(10)] == ["tick-1"]
    assert (await template(timed_client)).count == 1


async def test_buffer_one_keeps_one_run_and_starts_it_when_the_live_one_ends(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    t0 = await recur(timed_client, "buffer_one")
    [first] = await at(timed_client, clock, t0)
    assert await at(timed_client, clock, t0 + EVERY) == []
    assert await at(timed_client, clock, t0 + 2 * EVERY) == []  # a second one is dropped
    assert (await template(timed_client)).buffered == 1
    await first.complete()  # the buffered run starts as the live one ends
    [second] = await timed_client.queues["q"].pop_many(5)
    assert second.jid == "tick-2"
    await second.fail("boom", "failed")  # a failure ends it too: nothing else is buffered
    assert await timed_client.queues["q"].pop_many(5) == []
    assert (await template(timed_client)).buffered == 0


async def test_buffer_all_starts_every_buffered_run_in_turn_bounded_by_backlog(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    t0 = await recur(timed_client, "buffer_all", backlog=2)
    [run] = await at(timed_client, clock, t0)
    for minutes in (1, 2, 3):  # three due while tick-1 runs: two kept (backlog 2)
        assert await at(timed_client, clock, t0 + minutes * EVERY) == []
    assert (await template(timed_client)).buffered == 2
    started = []
    for _ in range(2):
        await run.complete()
        [run] = await timed_client.queues["q"].pop_many(5)
        started.append(run.jid)
    assert started == ["tick-2", "tick-3"]
    await run.complete()
    assert await timed_client.queues["q"].pop_many(5) == []


async def test_a_buffered_run_starts_at_the_next_due_time_when_the_live_one_went_otherwise(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    t0 = await recur(timed_client, "buffer_one")
    [first] = await at(timed_client, clock, t0)
    assert await at(timed_client, clock, t0 + EVERY) == []
    await first.cancel()  # no hook on cancel: the spawner releases it when next due
    runs = [job.jid for job in await at(timed_client, clock, t0 + 2 * EVERY)]
    assert runs == ["tick-2"]  # and the run due then waits behind it
    assert (await template(timed_client)).buffered == 1


async def test_cancel_other_cancels_the_live_run_and_starts_the_new_one(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    t0 = await recur(timed_client, "cancel_other")
    [first] = await at(timed_client, clock, t0)
    assert [job.jid for job in await at(timed_client, clock, t0 + EVERY)] == ["tick-2"]
    assert await state(timed_client, first.jid) is None  # cancelled
    # a run others depend on is not cancelled: the new one runs beside it
    await timed_client.queues["other"].put("app.After", depends=["tick-2"])
    assert [job.jid for job in await at(timed_client, clock, t0 + 2 * EVERY)] == ["tick-3"]
    assert await state(timed_client, "tick-2") == "running"


async def test_the_catch_up_window_drops_the_missed_runs_older_than_it(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    t0 = await recur(timed_client, None, catchup=25)
    await timed_client.queues["q"].recur("app.All", interval=EVERY, jid="all")
    clock.now = t0 + 10 * EVERY  # 11 times due; those within 25 s: the last three
    popped = await timed_client.queues["q"].pop_many(50)
    ticks = sorted(job.jid for job in popped if job.jid.startswith("tick-"))
    assert ticks == ["tick-1", "tick-2", "tick-3"]
    assert len([job for job in popped if job.jid.startswith("all-")]) == 11
    [upcoming] = await (await template(timed_client)).next_runs(1)
    assert upcoming.timestamp() == t0 + 11 * EVERY


async def test_the_catch_up_window_of_a_cron_schedule(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    clock.now = datetime(2026, 6, 1, 8, 0, 30, tzinfo=UTC).timestamp()
    await timed_client.queues["q"].recur("app.Tick", cron="* * * * *", name="tick", catchup=90)
    clock.now = datetime(2026, 6, 1, 9, 0, 30, tzinfo=UTC).timestamp()
    popped = await timed_client.queues["q"].pop_many(100)
    assert len(popped) == 2  # 08:59 and 09:00 of the 60 missed


async def test_pause_after_failures_in_a_row_and_resume(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    t0 = await recur(timed_client, None, pause_after=2)
    [run] = await at(timed_client, clock, t0)
    await run.fail("boom", "failed")
    [run] = await at(timed_client, clock, t0 + EVERY)
    await run.complete()  # a completion resets the count
    assert (await template(timed_client)).failures == 0
    for minutes in (2, 3):
        [run] = await at(timed_client, clock, t0 + minutes * EVERY)
        await run.fail("boom", "failed")
    paused = await template(timed_client)
    assert (paused.paused, paused.failures) == (True, 2)
    assert await at(timed_client, clock, t0 + 4 * EVERY) == []  # paused: dropped
    await paused.resume()
    assert (paused.paused, paused.failures) == (False, 0)
    assert [job.jid for job in await at(timed_client, clock, t0 + 5 * EVERY)] == ["tick-5"]


async def test_pause_and_resume_by_hand(timed_client: aqless.Client, clock: ManualClock) -> None:
    t0 = await recur(timed_client, None)
    found = await template(timed_client)
    await found.pause()
    assert (await template(timed_client)).paused
    assert await at(timed_client, clock, t0) == []
    await found.resume()
    assert [job.jid for job in await at(timed_client, clock, t0 + EVERY)] == ["tick-1"]


def jitter_of(rjid: str, when: float, bound: float) -> float:
    """The script's jitter: the first 32 bits of SHA-1 of ``<jid>@<time>``, scaled."""
    digest = hashlib.sha1(f"{rjid}@{when:.17g}".encode()).hexdigest()  # noqa: S324
    return bound * int(digest[:8], 16) / 2**32


async def test_jitter_delays_each_run_by_its_own_offset_within_the_bound(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    t0 = await recur(timed_client, None, jitter=8)
    clock.now = t0 + 2 * EVERY
    await timed_client.queues["q"].peek(10)  # spawns the three due
    offsets = [jitter_of("tick", t0 + k * EVERY, 8) for k in range(3)]
    assert all(0 <= offset < 8 for offset in offsets)
    assert len(set(offsets)) == 3
    scheduled = await timed_client.queues["q"].jobs("scheduled")
    for k, jid in enumerate(("tick-1", "tick-2", "tick-3")):
        due = t0 + k * EVERY + offsets[k]
        assert (jid in scheduled) == (due > clock.now), jid
    # each starts at its time plus its offset, not before
    clock.now = t0 + 2 * EVERY + offsets[2] - 0.5
    assert "tick-3" not in [job.jid for job in await timed_client.queues["q"].pop_many(5)]
    clock.now = t0 + 2 * EVERY + offsets[2] + 0.5
    assert "tick-3" in [job.jid for job in await timed_client.queues["q"].pop_many(5)]


async def test_backfill_of_a_day_at_a_one_minute_cron_makes_1440_runs_once(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    day = datetime(2026, 3, 2, tzinfo=UTC)
    clock.now = (day + timedelta(days=3)).timestamp()
    await timed_client.queues["q"].recur("app.Tick", cron="* * * * *", name="tick")
    found = await template(timed_client)
    assert await found.backfill(day, day + timedelta(days=1)) == 1440
    assert await timed_client.queues["q"].length() == 1440
    # again, or a range that overlaps it: only the times not made before
    assert await found.backfill(day, day + timedelta(days=1)) == 0
    assert await found.backfill(day + timedelta(hours=23), day + timedelta(hours=25)) == 60
    assert await timed_client.queues["q"].length() == 1500
    first = await timed_client.queues["q"].peek(1)
    assert first[0].jid == "tick-1"


async def test_backfill_of_an_interval_template_follows_its_step(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    t0 = clock.now
    await timed_client.queues["q"].recur("app.Tick", interval=60, offset=30, jid="tick")
    clock.now = t0 + 3600
    # its times are t0 + 30 + k minutes: 10 of them in [t0, t0 + 600)
    assert await (await template(timed_client)).backfill(t0, t0 + 600) == 10
    assert await (await template(timed_client)).backfill(t0 - 1, t0 + 631) == 1


async def test_a_bad_backfill_is_refused_before_anything_is_sent(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    t0 = await recur(timed_client, None)
    found = await template(timed_client)
    with pytest.raises(ConfigurationError, match="after its start"):
        await found.backfill(t0, t0)
    with pytest.raises(ConfigurationError, match="after now"):
        await found.backfill(t0 - 600, t0 + 600)
    with pytest.raises(InvalidValueError, match="start"):
        await found.backfill(-5, t0)
    with pytest.raises(ConfigurationError, match="at most"):
        await found.backfill(0, t0)
    assert await timed_client.queues["q"].length() == 0


async def test_a_registration_by_name_sets_the_policy_and_keeps_the_pause(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    queue = timed_client.queues["q"]
    await queue.recur("app.Tick", interval=EVERY, name="tick", overlap="skip", jitter=5)
    found = await template(timed_client)
    assert (found.overlap, found.jitter, found.catchup, found.pause_after) == ("skip", 5, 0, 0)
    await found.pause()
    await queue.recur("app.Tick", interval=EVERY, name="tick", pause_after=3)
    again = await template(timed_client)
    assert (again.overlap, again.jitter, again.pause_after, again.paused) == (
        "allow_all",
        0,
        3,
        True,
    )
    await again.update(overlap="buffer_all", catchup=600)
    assert (again.overlap, again.catchup, again.pause_after) == ("buffer_all", 600, 3)
    await again.update(overlap="allow_all")
    assert again.overlap == "allow_all"


async def test_a_run_whose_lock_lapsed_without_retries_counts_as_a_failure(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    t0 = clock.now
    queue = timed_client.queues["q"]
    await queue.recur("app.Tick", interval=3600, jid="tick", pause_after=1)
    [run] = await at(timed_client, clock, t0)
    assert run.jid == "tick-1"
    # its lock (60 s) lapses: the first pop after warns, the first after the grace fails it
    for later in (61, 200):
        await at(timed_client, clock, t0 + later)
    assert await state(timed_client, "tick-1") == "failed"
    found = await template(timed_client)
    assert (found.paused, found.failures) == (True, 1)
