"""An idle worker pops again as soon as finishing a job may have released another, without
waiting for its poll: dependents, and throttles with a maximum."""

from __future__ import annotations

import pytest

import aqless
from tests.support.worker import Recorder, all_complete, make_worker, one, running

pytestmark = pytest.mark.every_deployment

SLOW_POLL = 30.0  # no poll comes during these tests: only wake-ups can explain a pickup


async def test_a_dependent_runs_right_after_its_dependency(client: aqless.Client) -> None:
    recorder = Recorder()
    queue = client.queues["q"]
    worker = make_worker(client, handlers=one(recorder), interval=SLOW_POLL)
    async with running(worker):
        first = await queue.put("app.job", {})
        second = await queue.put("app.job", {}, depends=[first])
        await all_complete(client, [first, second], timeout=3)
    assert recorder.jids == [first, second]


async def test_a_throttled_queue_drains_without_polling(client: aqless.Client) -> None:
    recorder = Recorder()
    queue = client.queues["q"]
    await queue.set_throttle(1)
    jids = [await queue.put("app.job", {"n": n}) for n in range(4)]
    worker = make_worker(client, handlers=one(recorder), interval=SLOW_POLL, concurrency=4)
    async with running(worker):
        await all_complete(client, jids, timeout=3)
    assert sorted(recorder.jids) == sorted(jids)


async def test_jobs_put_while_the_slots_are_full_are_taken_when_one_frees(
    client: aqless.Client,
) -> None:
    recorder = Recorder()
    queue = client.queues["q"]
    worker = make_worker(client, handlers=one(recorder), interval=SLOW_POLL, concurrency=1)
    async with running(worker):
        jids = [await queue.put("app.job", {"n": n}) for n in range(5)]
        await all_complete(client, jids, timeout=3)
    assert sorted(recorder.jids) == sorted(jids)
