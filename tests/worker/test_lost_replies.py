"""News the worker must not take at face value: a pop whose reply a dropped connection lost
(the jobs it took are found and run), and a lock expiry warning (answered with a heartbeat)."""

from __future__ import annotations

import anyio
import pytest

import aqless
from aqless.models import JobState
from tests.support.worker import (
    Recorder,
    all_complete,
    get_job,
    make_worker,
    one,
    running,
    until,
)

pytestmark = pytest.mark.every_deployment


async def test_jobs_held_but_unknown_are_taken_back_after_a_failed_pop(
    client: aqless.Client,
) -> None:
    recorder = Recorder()
    queue = client.queues["q"]
    jids = [await queue.put("app.job", {"n": n}) for n in range(3)]
    # as if a pop ran on the server but its reply never arrived: held by this worker's name
    taken = await queue.pop_many(2, worker=client.worker_name)
    assert {job.state for job in taken} == {JobState.RUNNING}
    worker = make_worker(client, handlers=one(recorder), concurrency=1)
    worker._popper.unknown_held = True  # what a ConnectionLostError in a pop leaves behind
    async with running(worker):
        await all_complete(client, jids, timeout=5)
        await until(lambda: worker.counters.completed == 3)
    assert sorted(recorder.jids) == sorted(jids)


async def test_a_failed_look_for_unknown_jobs_is_tried_again_not_fatal(
    client: aqless.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The call that lists the jobs held after a lost pop reply may lose its reply too (a
    slow, lossy network): the worker looks again later instead of ending."""
    recorder = Recorder()
    queue = client.queues["q"]
    jids = [await queue.put("app.job", {"n": n}) for n in range(2)]
    await queue.pop_many(1, worker=client.worker_name)  # held, its reply lost
    listing = client.workers.jobs
    failures: list[str] = []

    async def lost_once(worker: str) -> aqless.WorkerJobs:
        if not failures:
            failures.append(worker)
            raise aqless.ConnectionLostError("worker.jobs: no reply (the network dropped it)")
        return await listing(worker)

    monkeypatch.setattr(client.workers, "jobs", lost_once)
    worker = make_worker(client, handlers=one(recorder), concurrency=1)
    worker._popper.unknown_held = True
    async with running(worker) as run:
        await all_complete(client, jids, timeout=5)
        assert not run.done.is_set()  # still running: the failure did not end it
    assert failures == [client.worker_name]
    assert sorted(recorder.jids) == sorted(jids)


async def test_a_lock_expiry_warning_is_answered_with_a_heartbeat(
    client: aqless.Client, other: aqless.Client
) -> None:
    release = anyio.Event()

    async def waits(job: aqless.Job) -> None:
        await release.wait()

    queue = client.queues["q"]
    jid = await queue.put("app.job", {})
    worker = make_worker(client, handlers=one(waits))
    async with running(worker):
        await until(lambda: jid in worker.running)
        # as if the worker had been frozen past its lock: expired, as the server sees it
        past = client.clock() - 1
        await client.redis.zadd(f"{client.prefix}q:q-locks", {jid: past})
        await client.redis.hset(f"{client.prefix}j:{jid}", "expires", past)
        assert await other.queues["q"].pop() is None  # the courtesy step: a warning only
        await until(lambda: worker.heartbeats.renewals >= 1)
        job = await get_job(client, jid)
        assert job.worker_name == client.worker_name
        assert job.expires_at > client.clock()  # renewed: the job stayed ours
        release.set()
        await all_complete(client, [jid])
    assert (worker.counters.completed, worker.counters.lost) == (1, 0)
