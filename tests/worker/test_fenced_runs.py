"""Every way a job reaches a worker carries its attempt, so that the job's code can fence its
writes and the server can fence its verbs: a pop whose reply was lost, a push lost with its
subscription (both taken back with ``worker.takeBack``, each as a new attempt), a job held
for a slot (prefetch), and a job the same worker pops again after its lock lapsed. In each,
the job's fenced write (tests/worker/fenced_job.py) lands exactly once, by the attempt the
server completed. (``aqless-run --resume``: tests/worker/test_processes_resume.py.)"""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator

import anyio
import pytest

import aqless
from aqless.models import JobState
from tests.support.worker import (
    WORKER,
    get_job,
    history_of,
    make_worker,
    one,
    running,
    until,
    until_state,
)
from tests.worker.fenced_job import KLASS, fenced, runs, writes
from tests.worker.reply_dropping_proxy import ReplyDroppingProxy

HANDLERS = one(fenced, KLASS)


@pytest.fixture
async def direct(server_url: str) -> AsyncIterator[aqless.Client]:
    """A client straight to the server, in a namespace of the test's own."""
    async with aqless.Client(server_url, namespace=f"fenced-{uuid.uuid4().hex[:8]}") as client:
        yield client


@pytest.fixture
async def proxy(server_url: str) -> AsyncIterator[ReplyDroppingProxy]:
    async with ReplyDroppingProxy(server_url) as proxy:
        yield proxy


@pytest.fixture
async def steady(direct: aqless.Client) -> AsyncIterator[aqless.Client]:
    """The worker's client, straight to the server, in `direct`'s namespace."""
    async with aqless.Client(direct.url, namespace=direct.namespace, worker_name=WORKER) as client:
        yield client


@pytest.fixture
async def flaky(proxy: ReplyDroppingProxy, direct: aqless.Client) -> AsyncIterator[aqless.Client]:
    """The worker's client, through the proxy, in `direct`'s namespace."""
    async with aqless.Client(proxy.url, namespace=direct.namespace, worker_name=WORKER) as client:
        yield client


async def landed_once(client: aqless.Client, jid: str, attempt: int) -> None:
    """The job completed by `attempt`, and only that attempt's fenced write landed."""
    job = await until_state(client, jid, JobState.COMPLETE, timeout=10)
    assert await writes(client, jid) == [str(attempt)]
    assert await client.redis.hget(f"{client.prefix}j:{jid}", "attempt") == str(attempt)
    handed_out = history_of(job)
    assert handed_out.count("popped") + handed_out.count("taken-back") == attempt


async def test_a_job_whose_pop_reply_was_lost_runs_once_with_its_attempt(
    direct: aqless.Client, flaky: aqless.Client, proxy: ReplyDroppingProxy
) -> None:
    jid = await direct.queues["q"].put(KLASS, {})
    proxy.drop_reply_to(b"rateLimit.pop")
    worker = make_worker(flaky, handlers=HANDLERS)
    async with running(worker):
        await landed_once(direct, jid, 2)  # the lost pop's attempt 1, taken back as 2
    assert proxy.dropped
    assert await runs(direct, jid) == ["2 null"]
    assert worker.counters.completed == 1


async def test_a_job_whose_push_was_lost_runs_once_with_its_attempt(
    direct: aqless.Client, flaky: aqless.Client, proxy: ReplyDroppingProxy
) -> None:
    worker = make_worker(flaky, handlers=HANDLERS)
    async with running(worker):

        async def offered() -> bool:
            return await direct.redis.hget(f"{direct.prefix}offers:q", WORKER) is not None

        await until(offered, what="the idle worker offers its slots")
        proxy.drop_message(f"push:{WORKER}".encode())
        jid = await direct.queues["q"].put(KLASS, {})
        await landed_once(direct, jid, 2)  # the lost push's attempt 1, taken back as 2
    assert proxy.dropped
    assert await runs(direct, jid) == ["2 null"]


async def test_a_job_held_for_a_slot_runs_once_with_its_attempt(
    direct: aqless.Client, steady: aqless.Client
) -> None:
    first = await direct.queues["q"].put(KLASS, {"pauses": [0.5]}, priority=1)
    held = await direct.queues["q"].put(KLASS, {})
    worker = make_worker(steady, handlers=HANDLERS, concurrency=1, prefetch=1)
    async with running(worker):
        await until(lambda: held in worker.running and first in worker.running)
        await landed_once(direct, held, 1)
        await landed_once(direct, first, 1)
    assert await runs(direct, held) == ["1 null"]


async def test_a_job_popped_again_by_its_worker_runs_once_more_with_the_new_attempt(
    direct: aqless.Client, steady: aqless.Client
) -> None:
    """Its lock lapsed unnoticed (an outage) and the same worker's next pop took it again:
    the first attempt's code is cut off before it writes, the second writes and completes."""
    await direct.config.set("grace-period", 0)
    jid = await direct.queues["q"].put(KLASS, {"pauses": [30]})
    worker = make_worker(steady, handlers=HANDLERS, concurrency=2)
    async with running(worker):

        async def started() -> bool:
            return len(await runs(direct, jid)) == 1

        await until(started)
        past = direct.clock() - 1
        await direct.redis.zadd(f"{direct.prefix}q:q-locks", {jid: past})
        await direct.redis.hset(f"{direct.prefix}j:{jid}", "expires", past)
        await landed_once(direct, jid, 2)
        worker._popper.unknown_held = True  # a look for unknown jobs finds none
        await until(lambda: not worker.running)
    assert await runs(direct, jid) == ["1 null", "2 null"]
    assert (worker.counters.lost, worker.counters.completed) == (1, 1)


async def test_a_reply_bringing_an_attempt_the_worker_holds_or_an_earlier_one_starts_nothing(
    direct: aqless.Client, steady: aqless.Client, caplog: pytest.LogCaptureFixture
) -> None:
    jid = await direct.queues["q"].put(KLASS, {"pauses": [30]})
    worker = make_worker(steady, handlers=HANDLERS)
    async with running(worker):
        await until(lambda: jid in worker.running)
        current = worker._running.by_jid[jid]
        assert current.job.attempt == 1
        again = await get_job(direct, jid)
        assert worker._jobs is not None
        for attempt in (1, 0):
            again.attempt = attempt
            worker._take(worker._jobs, again)
        assert worker._running.by_jid[jid] is current
        assert current.lost is None
        again.attempt = None  # never run: the worker could fence neither verbs nor writes
        with caplog.at_level(logging.ERROR, logger="aqless"):
            worker._take(worker._jobs, again)
        assert "without an attempt: not run" in caplog.text
        assert worker._running.by_jid[jid] is current
        assert worker.counters.started == 1


async def test_a_put_whose_reply_was_lost_retried_without_replacing_runs_its_job_once(
    direct: aqless.Client, steady: aqless.Client, flaky: aqless.Client, proxy: ReplyDroppingProxy
) -> None:
    """The put landed, its reply did not; the job ran and finished before the retry. The
    retry with ``replace=False`` (the documented one) leaves the finished job alone: a plain
    put under the same jid would have put it again, and run it a second time."""
    jid = "retried-put"
    await flaky.queues["q"].peek()  # the script is loaded: the put is the call that runs
    proxy.drop_reply_to(b"queue.putNew")
    with pytest.raises(aqless.ConnectionLostError):
        await flaky.queues["q"].put(KLASS, {}, jid=jid, replace=False)
    assert proxy.dropped
    worker = make_worker(steady, handlers=HANDLERS)
    async with running(worker):
        await landed_once(direct, jid, 1)
        retried = await flaky.queues["q"].put_result(KLASS, {}, jid=jid, replace=False)
        assert (retried.jid, retried.deduplicated) == (jid, True)
        assert await flaky.queues["q"].put(KLASS, {}, jid=jid, replace=False) == jid
    assert await runs(direct, jid) == ["1 null"]
    assert worker.counters.started == 1
    job = await get_job(direct, jid)
    assert (job.state, history_of(job)) == (JobState.COMPLETE, ["put", "popped", "done"])


async def test_a_look_for_unknown_jobs_waits_for_the_pops_on_their_way(
    direct: aqless.Client, steady: aqless.Client
) -> None:
    """A pop on its way may bring jobs the server lists as held: taken back meanwhile, each
    would start twice (the pop's attempt, cut off, and the take-back's). The look waits."""
    jid = await direct.queues["q"].put(KLASS, {})
    await direct.queues["q"].pop_many(1, worker=WORKER)  # held by the worker's name
    worker = make_worker(steady, handlers=HANDLERS)
    worker._running.coming = 1  # as while a pop is on its way
    async with anyio.create_task_group() as jobs:
        await worker._resume(jobs)
    assert worker._popper.unknown_held  # looked at again after the next pop
    assert not worker.running
    assert await direct.redis.hget(f"{direct.prefix}j:{jid}", "attempt") == "1"
