"""Recurring templates registered by name: registering a name again updates its template
(in one call) instead of adding one, and keeps its next spawn time unless the schedule
changed. On Valkey 9 and Redis 7, on a controlled clock."""

from __future__ import annotations

import pytest

import aqless
from aqless import ConfigurationError, InvalidValueError, RecurringJob
from tests.support.clients import ManualClock

pytest_plugins = ["tests.support.client_fixtures"]


async def template(client: aqless.Client, rjid: str) -> RecurringJob:
    found = await client.jobs.get(rjid)
    assert isinstance(found, RecurringJob)
    return found


async def next_run(client: aqless.Client, rjid: str) -> float:
    (moment,) = await (await template(client, rjid)).next_runs(1)
    return moment.timestamp()


async def test_two_starts_make_one_template_with_the_second_settings(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    queue = timed_client.queues["reports"]
    first = await queue.recur(
        "app.Report", {"v": 1}, 3600, name="nightly-report", offset=3600, tags=["a"]
    )
    clock.now += 600  # the service starts again ten minutes later, with new settings
    second = await queue.recur(
        "app.ReportV2",
        {"v": 2},
        3600,
        name="nightly-report",
        offset=5,
        priority=7,
        tags=["b", "c"],
        retries=4,
        backlog=2,
        throttles=["exports"],
    )
    assert first == second == "nightly-report"
    assert await queue.jobs("recurring") == ["nightly-report"]
    job = await template(timed_client, "nightly-report")
    assert (job.klass_name, job.data, job.interval) == ("app.ReportV2", {"v": 2}, 3600)
    assert (job.priority, job.tags, job.retries, job.backlog) == (7, ("b", "c"), 4, 2)
    assert job.throttles == ("exports", "ql:q:reports")
    # the schedule did not change, so neither did its next spawn (offset= is not applied)
    assert await next_run(timed_client, "nightly-report") == clock.now - 600 + 3600


async def test_the_spawn_count_and_schedule_survive_a_registration(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    queue = timed_client.queues["q"]
    await queue.recur("app.Tick", {}, 60, name="tick", offset=60)
    clock.now += 60
    assert len(await queue.pop_many(5)) == 1
    await queue.recur("app.Tick", {"n": 2}, 60, name="tick")
    job = await template(timed_client, "tick")
    assert (job.count, job.data) == (1, {"n": 2})
    assert await next_run(timed_client, "tick") == clock.now + 60
    assert await queue.pop_many(5) == []  # nothing due yet


async def test_a_new_interval_starts_the_schedule_over(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    queue = timed_client.queues["q"]
    await queue.recur("app.Tick", {}, 3600, name="tick")
    clock.now += 100
    await queue.recur("app.Tick", {}, 60, name="tick", offset=10)
    assert await next_run(timed_client, "tick") == clock.now + 10
    assert (await template(timed_client, "tick")).interval == 60


async def test_a_name_registered_in_another_queue_moves_there(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    await timed_client.queues["old"].recur("app.Tick", {}, 60, name="tick", offset=60)
    await timed_client.queues["new"].recur("app.Tick", {}, 60, name="tick")
    assert await timed_client.queues["old"].jobs("recurring") == []
    assert await timed_client.queues["new"].jobs("recurring") == ["tick"]
    assert await next_run(timed_client, "tick") == clock.now + 60


async def test_the_same_cron_keeps_its_schedule(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    queue = timed_client.queues["q"]
    await queue.recur("app.Report", cron="0 9 * * *", tz="Europe/Paris", name="report")
    cron_key = f"{timed_client.prefix}cron:report"
    times = await timed_client.redis.zrange(cron_key, 0, -1)
    runs = await (await template(timed_client, "report")).next_runs(3)
    clock.now += 86400 * 2  # two days later; nothing popped meanwhile
    await queue.recur("app.Report", {"v": 2}, cron="0 9 * * *", tz="Europe/Paris", name="report")
    job = await template(timed_client, "report")
    assert (job.data, job.cron, job.tz) == ({"v": 2}, "0 9 * * *", "Europe/Paris")
    assert await job.next_runs(3) == runs
    assert await timed_client.redis.zrange(cron_key, 0, -1) == times


async def test_a_new_cron_or_zone_replaces_the_schedule_in_the_same_call(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    queue = timed_client.queues["q"]
    await queue.recur("app.Report", cron="0 9 * * *", name="report")
    await queue.recur("app.Report", cron="30 6 * * *", tz="America/New_York", name="report")
    job = await template(timed_client, "report")
    assert (job.cron, job.tz) == ("30 6 * * *", "America/New_York")
    runs = await job.next_runs(3)
    assert {(moment.hour, moment.minute) for moment in runs} == {(6, 30)}
    assert await timed_client.redis.zscore(f"{timed_client.prefix}crons", "report") is not None
    # and back to an interval: the cron schedule goes
    await queue.recur("app.Report", {}, 120, name="report")
    job = await template(timed_client, "report")
    assert (job.cron, job.interval) == (None, 120)
    assert await next_run(timed_client, "report") == clock.now
    assert await timed_client.redis.exists(f"{timed_client.prefix}cron:report") == 0
    assert await timed_client.redis.zscore(f"{timed_client.prefix}crons", "report") is None


async def test_an_interval_template_becomes_a_cron_one(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    queue = timed_client.queues["q"]
    await queue.recur("app.Report", {}, 60, name="report")
    await queue.recur("app.Report", cron="*/5 * * * *", name="report")
    job = await template(timed_client, "report")
    assert (job.cron, job.interval) == ("*/5 * * * *", 300)
    assert all(moment.minute % 5 == 0 for moment in await job.next_runs(4))
    assert await queue.jobs("recurring") == ["report"]


@pytest.mark.parametrize(
    ("options", "error", "text"),
    [
        ({"name": "report", "jid": "r-1"}, ConfigurationError, "either name= or jid="),
        ({"name": ""}, InvalidValueError, "name must be a name"),
        ({"name": "nightly report"}, InvalidValueError, "name must be a name"),
        ({"name": 7}, InvalidValueError, "name must be a name"),
    ],
)
async def test_a_bad_name_is_refused_and_nothing_written(
    timed_client: aqless.Client, options: dict[str, object], error: type[Exception], text: str
) -> None:
    with pytest.raises(error, match=text):
        await timed_client.queues["q"].recur("app.Job", {}, 60, **options)  # type: ignore[arg-type]
    assert await timed_client.queues["q"].jobs("recurring") == []


async def test_without_a_name_each_call_adds_a_template(timed_client: aqless.Client) -> None:
    queue = timed_client.queues["q"]
    await queue.recur("app.Job", {}, 60)
    await queue.recur("app.Job", {}, 60)
    assert len(await queue.jobs("recurring")) == 2


async def test_other_qless_clients_see_one_plain_recurring_job(
    timed_client: aqless.Client,
) -> None:
    queue = timed_client.queues["q"]
    await queue.recur("app.Report", {"v": 1}, cron="0 9 * * *", name="report")
    await queue.recur("app.ReportV2", {"v": 2}, cron="0 9 * * *", name="report", priority=3)
    # classic qless-core's view: one template, its interval the schedule's gap
    classic = await timed_client.protocol.json("recur.get", "report")
    assert (classic["jid"], classic["klass"], classic["priority"]) == ("report", "app.ReportV2", 3)
    assert classic["interval"] == 86400
    assert await timed_client.redis.zcard(f"{timed_client.prefix}q:q-recur") == 1
    assert await timed_client.redis.keys(f"{timed_client.prefix}r:*") == [
        f"{timed_client.prefix}r:report"
    ]
