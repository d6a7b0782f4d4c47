"""Workers and cron schedules: they run the jobs a schedule spawns, and top it up when it
runs low."""

from __future__ import annotations

import pytest

import aqless
from aqless import schedules
from tests.support.worker import Recorder, make_worker, one, running, until


async def test_a_worker_runs_cron_jobs_and_tops_the_schedule_up(
    client: aqless.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(schedules, "REFILL_EVERY", 0.05)
    rjid = await client.queues["q"].recur("app.job", cron="* * * * * *")  # every second
    cron_key, crons = f"{client.prefix}cron:{rjid}", f"{client.prefix}crons"
    # as if the schedule ran low: two fire times left, due for topping up
    await client.redis.zremrangebyrank(cron_key, 2, -1)
    await client.redis.zadd(crons, {rjid: 0})
    recorder = Recorder()
    async with running(make_worker(client, handlers=one(recorder))):
        await until(lambda: len(recorder.jids) >= 2, what="two cron jobs run")

        async def topped_up() -> bool:
            return int(await client.redis.zcard(cron_key)) > 50

        await until(topped_up, what="the schedule topped up")
    assert recorder.jids[:2] == [f"{rjid}-1", f"{rjid}-2"]
    refill_at = await client.redis.zscore(crons, rjid)
    assert refill_at is not None
    assert refill_at > client.clock() + 10
