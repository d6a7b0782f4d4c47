"""Cron schedules of recurring jobs, on a controlled clock: DST changes in two time zones,
catch-up with `backlog`, topping up, updates and refusals."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

import aqless
from aqless import ConfigurationError, InvalidArgumentError, RecurringJob
from aqless.schedules import refill_schedules
from tests.support.clients import ManualClock

pytest_plugins = ["tests.support.client_fixtures"]

PARIS, NEW_YORK = "Europe/Paris", "America/New_York"


def local(tz: str, text: str, fold: int = 0) -> float:
    """The unix time of a wall-clock time in `tz` (`fold=1`: the second of a repeated one)."""
    return datetime.fromisoformat(text).replace(tzinfo=ZoneInfo(tz), fold=fold).timestamp()


def wall(moment: datetime) -> str:
    return moment.strftime("%m-%d %H:%M%z")


async def recurring(client: aqless.Client, rjid: str) -> RecurringJob:
    found = await client.jobs.get(rjid)
    assert isinstance(found, RecurringJob)
    return found


async def spawned_at(client: aqless.Client, clock: ManualClock, when: float) -> int:
    """How many jobs the queue spawns (and hands out) when the clock reaches `when`."""
    clock.now = when
    return len(await client.queues["q"].pop_many(50))


async def test_spring_forward_in_paris_runs_a_skipped_time_at_the_change(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    clock.now = local(PARIS, "2026-03-28 12:00")
    rjid = await timed_client.queues["q"].recur("app.Nightly", cron="30 2 * * *", tz=PARIS)
    job = await recurring(timed_client, rjid)
    assert (job.cron, job.tz) == ("30 2 * * *", PARIS)
    # 02:30 does not exist on March 29th: it runs when the clock jumps to 03:00
    runs = [wall(moment) for moment in await job.next_runs(3)]
    assert runs == ["03-29 03:00+0200", "03-30 02:30+0200", "03-31 02:30+0200"]
    assert await spawned_at(timed_client, clock, local(PARIS, "2026-03-29 01:59")) == 0
    assert await spawned_at(timed_client, clock, local(PARIS, "2026-03-29 03:00")) == 1
    assert await spawned_at(timed_client, clock, local(PARIS, "2026-03-30 02:29")) == 0
    assert await spawned_at(timed_client, clock, local(PARIS, "2026-03-30 02:30")) == 1


async def test_fall_back_in_new_york_runs_a_repeated_time_once(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    clock.now = local(NEW_YORK, "2026-10-31 12:00")
    rjid = await timed_client.queues["q"].recur("app.Nightly", cron="30 1 * * *", tz=NEW_YORK)
    job = await recurring(timed_client, rjid)
    runs = [wall(moment) for moment in await job.next_runs(2)]
    assert runs == ["11-01 01:30-0400", "11-02 01:30-0500"]
    assert await spawned_at(timed_client, clock, local(NEW_YORK, "2026-11-01 01:30")) == 1
    # 01:30 comes round again an hour later (EST): no second run
    repeated = local(NEW_YORK, "2026-11-01 01:30", fold=1)
    assert repeated - local(NEW_YORK, "2026-11-01 01:30") == 3600
    assert await spawned_at(timed_client, clock, repeated) == 0
    assert await spawned_at(timed_client, clock, local(NEW_YORK, "2026-11-02 01:30")) == 1


async def test_spring_forward_in_new_york(timed_client: aqless.Client, clock: ManualClock) -> None:
    clock.now = local(NEW_YORK, "2026-03-07 12:00")
    rjid = await timed_client.queues["q"].recur("app.Nightly", cron="30 2 * * *", tz=NEW_YORK)
    runs = [wall(moment) for moment in await (await recurring(timed_client, rjid)).next_runs(2)]
    assert runs == ["03-08 03:00-0400", "03-09 02:30-0400"]
    assert await spawned_at(timed_client, clock, local(NEW_YORK, "2026-03-08 01:59")) == 0
    assert await spawned_at(timed_client, clock, local(NEW_YORK, "2026-03-08 03:00")) == 1


async def test_fall_back_in_paris_every_half_hour_follows_real_time(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    clock.now = local(PARIS, "2026-10-25 01:40")
    rjid = await timed_client.queues["q"].recur("app.Often", cron="*/30 * * * *", tz=PARIS)
    job = await recurring(timed_client, rjid)
    assert job.interval == 1800  # what other qless clients see
    runs = [wall(moment) for moment in await job.next_runs(5)]
    # 02:00 and 02:30 come twice (summer time, then winter time): each runs each time
    assert runs == [
        "10-25 02:00+0200",
        "10-25 02:30+0200",
        "10-25 02:00+0100",
        "10-25 02:30+0100",
        "10-25 03:00+0100",
    ]
    assert await spawned_at(timed_client, clock, local(PARIS, "2026-10-25 02:30", fold=1)) == 4


async def test_backlog_bounds_the_catch_up(timed_client: aqless.Client, clock: ManualClock) -> None:
    queue = timed_client.queues["q"]
    clock.now = local(PARIS, "2026-06-01 08:01")
    await queue.recur("app.Bounded", cron="*/5 * * * *", tz=PARIS, backlog=2, jid="bounded")
    await queue.recur("app.All", cron="*/5 * * * *", tz=PARIS, jid="all")
    # 08:05 to 09:00 were missed: 12 runs
    clock.now = local(PARIS, "2026-06-01 09:02")
    popped = await queue.pop_many(50)
    spawned = sorted(job.jid for job in popped if job.jid.startswith("bounded-"))
    assert spawned == ["bounded-1", "bounded-2"]  # the last two: 08:55 and 09:00
    assert len([job for job in popped if job.jid.startswith("all-")]) == 12
    bounded = await recurring(timed_client, "bounded")
    assert [wall(moment) for moment in await bounded.next_runs(1)] == ["06-01 09:05+0200"]


@pytest.mark.parametrize("backlog", [1, 2, 3])
async def test_backlog_catches_up_as_many_runs_as_an_interval_template(
    timed_client: aqless.Client, clock: ManualClock, backlog: int
) -> None:
    queue = timed_client.queues["q"]
    clock.now = local(PARIS, "2026-06-01 08:00:30")
    # both first run at 08:01 and then every minute
    await queue.recur("app.Cron", cron="* * * * *", tz=PARIS, backlog=backlog, jid="cron")
    await queue.recur("app.Every", interval=60, offset=30, backlog=backlog, jid="every")
    # 08:01, 08:02 and 08:03 were missed
    clock.now = local(PARIS, "2026-06-01 08:03:30")
    popped = await queue.pop_many(50)
    spawned = {
        name: [j for j in popped if j.jid.startswith(f"{name}-")] for name in ("cron", "every")
    }
    assert len(spawned["every"]) == min(backlog, 3)
    assert len(spawned["cron"]) == len(spawned["every"])
    assert [job.jid for job in spawned["cron"]] == [f"cron-{i}" for i in range(1, backlog + 1)]
    for name in ("cron", "every"):
        runs = await (await recurring(timed_client, name)).next_runs(1)
        assert [moment.timestamp() for moment in runs] == [local(PARIS, "2026-06-01 08:04")]


async def test_workers_top_the_schedule_up(timed_client: aqless.Client, clock: ManualClock) -> None:
    clock.now = local(PARIS, "2026-06-01 08:00:30")
    rjid = await timed_client.queues["q"].recur("app.Minutely", cron="* * * * *", tz=PARIS)
    cron_key = f"{timed_client.prefix}cron:{rjid}"
    # 100 runs ahead: the next spawn and 99 more
    assert await timed_client.redis.zcard(cron_key) == 99
    assert await refill_schedules(timed_client) == 0  # not due before halfway
    clock.now += 3600
    assert await refill_schedules(timed_client) == 1
    assert await refill_schedules(timed_client) == 0  # claimed, then topped up
    last = await timed_client.redis.zrange(cron_key, -1, -1, withscores=True)
    # it held 08:01 to 09:40 (100 runs); 100 more follow
    assert last[0][1] == local(PARIS, "2026-06-01 11:20")
    runs = await (await recurring(timed_client, rjid)).next_runs(3)
    assert [wall(moment) for moment in runs] == [
        "06-01 08:01+0200",
        "06-01 08:02+0200",
        "06-01 08:03+0200",
    ]


async def test_a_stale_top_up_is_dropped(timed_client: aqless.Client, clock: ManualClock) -> None:
    rjid = await timed_client.queues["q"].recur("app.Job", cron="0 * * * *")
    job = await recurring(timed_client, rjid)
    await job.update(cron="15 * * * *")
    assert job.cron == "15 * * * *"
    extended = await timed_client.protocol.call(
        "recurringJob.extendCron", rjid, "0 * * * *", "UTC", clock.now, clock.now + 7200
    )
    assert extended == 0
    runs = await job.next_runs(30)
    assert {moment.minute for moment in runs} == {15}


async def test_a_dry_schedule_falls_back_to_the_interval(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    clock.now = local("UTC", "2026-06-01 08:00:30")
    rjid = await timed_client.queues["q"].recur("app.Hourly", cron="0 * * * *")
    await timed_client.redis.delete(f"{timed_client.prefix}cron:{rjid}")
    runs = await (await recurring(timed_client, rjid)).next_runs(3)
    assert [wall(moment) for moment in runs] == [
        "06-01 09:00+0000",
        "06-01 10:00+0000",
        "06-01 11:00+0000",
    ]
    assert await spawned_at(timed_client, clock, local("UTC", "2026-06-01 10:00")) == 2


async def test_update_and_cancel(timed_client: aqless.Client, clock: ManualClock) -> None:
    clock.now = local(PARIS, "2026-06-01 08:00")
    rjid = await timed_client.queues["q"].recur("app.Job", cron="0 9 * * *", tz=PARIS)
    job = await recurring(timed_client, rjid)
    await job.update(tz=NEW_YORK)
    assert (job.cron, job.tz) == ("0 9 * * *", NEW_YORK)
    assert [wall(moment) for moment in await job.next_runs(1)] == ["06-01 09:00-0400"]
    with pytest.raises(ConfigurationError, match="interval"):
        await job.update(interval=60)
    await job.cancel()
    assert await timed_client.redis.exists(f"{timed_client.prefix}cron:{rjid}") == 0
    assert await timed_client.redis.zscore(f"{timed_client.prefix}crons", rjid) is None


async def test_recur_again_by_interval_drops_the_cron(timed_client: aqless.Client) -> None:
    queue = timed_client.queues["q"]
    await queue.recur("app.Job", cron="0 9 * * *", jid="r")
    await queue.recur("app.Job", {}, 30, jid="r")
    job = await recurring(timed_client, "r")
    assert (job.cron, job.interval) == (None, 30)
    assert await timed_client.redis.exists(f"{timed_client.prefix}cron:r") == 0


async def test_interval_jobs_have_next_runs_too(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    rjid = await timed_client.queues["q"].recur("app.Job", {}, 60, offset=10)
    runs = await (await recurring(timed_client, rjid)).next_runs(2)
    assert [moment.timestamp() for moment in runs] == [clock.now + 10, clock.now + 70]


@pytest.mark.parametrize(
    ("options", "error", "text"),
    [
        ({"cron": "61 * * * *"}, InvalidArgumentError, "bad cron '61 \\* \\* \\* \\*'"),
        ({"cron": "* * *"}, InvalidArgumentError, "Wrong number of fields"),
        ({"cron": "* * * * *", "tz": "Mars/Olympus"}, InvalidArgumentError, "time zone"),
        ({"cron": "* * * * *", "interval": 60}, ConfigurationError, "not both"),
        ({"tz": PARIS}, ConfigurationError, "give cron= too"),
    ],
)
async def test_bad_schedules_are_refused(
    timed_client: aqless.Client, options: dict[str, str], error: type[Exception], text: str
) -> None:
    with pytest.raises(error, match=text):
        await timed_client.queues["q"].recur("app.Job", **options)  # type: ignore[arg-type]
    assert await timed_client.queues["q"].jobs("recurring") == []
