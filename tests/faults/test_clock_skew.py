"""Clock skew: every call carries its caller's ``now`` (the server's clock is never read), so
clients whose clocks differ see each other's deadlines moved by the difference.

A lock of H seconds (the queue's ``heartbeat``) is set to the holder's ``now + H``, and the
worker renews it when a third of it has passed, so it always ends at least 2H/3 ahead of the
holder's clock. A worker whose clock runs ahead of the holder's by more than that sees the
lock expired before the renewal: its pop warns the holder (``lock_lost``), the holder answers
with a heartbeat (setting the lock to its own ``now + H``, which undoes the grace period), and
the next such pop takes the job. The tolerance is therefore 2H/3 (less the heartbeat's round
trip), whatever the grace period. Schedules and delays are due by the popping worker's clock.

Real workers with real time, offset clocks, and a queue heartbeat of H = 2 s (renewed every
0.67 s; tolerance 1.33 s): the tests scale down what holds for the default 60 s (40 s)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest

import aqless
from tests.support.worker import get_job, history_of, make_worker, one, running, until

pytestmark = [pytest.mark.faults, pytest.mark.timeout(60)]

H = 2.0  # the queue's lock length (q-heartbeat), in seconds
T = 1_700_000_000.0  # a fixed moment for the tests with stopped clocks


def skewed(server_url: str, name: str, offset: float) -> aqless.Client:
    """A client as a worker whose clock is `offset` seconds off the real time."""
    return aqless.Client(server_url, worker_name=name, clock=lambda: time.time() + offset)


@asynccontextmanager
async def holding(
    server_url: str, offset: float, runs_for: float
) -> AsyncIterator[tuple[aqless.Worker, aqless.Client, str]]:
    """A worker ("holder", its clock `offset` off) running one job of queue q that takes
    `runs_for` seconds; yields (the worker, a client on the real clock, the jid)."""
    async with aqless.Client(server_url, worker_name="producer") as client:
        await client.redis.flushall()
        await client.config.set("q-heartbeat", H)
        jid = await client.queues["q"].put("app.job", {})

        async def work(job: aqless.Job) -> None:
            await anyio.sleep(runs_for)

        async with skewed(server_url, "holder", offset) as holder_client:
            worker = make_worker(holder_client, ["q"], one(work))
            async with running(worker):
                await until(lambda: jid in worker.running, what="the holder runs the job")
                yield worker, client, jid


async def pop_for(client: aqless.Client, seconds: float) -> list[str]:
    """Pop queue q every 50 ms for `seconds` (as an idle worker polling hard would); the
    jids taken."""
    taken: list[str] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not taken:
        job = await client.queues["q"].pop()
        if job is not None:
            taken.append(job.jid)
        await anyio.sleep(0.05)
    return taken


async def test_a_holder_behind_by_less_than_two_thirds_of_the_lock_keeps_it(
    server_url: str,
) -> None:
    """The holder's clock 0.3 H behind a worker that pops all the time: the job, running
    longer than its lock, is renewed and never looks expired to the other."""
    async with (
        holding(server_url, -0.3 * H, runs_for=1.2 * H) as (worker, client, jid),
        skewed(server_url, "other", 0.0) as other,
    ):
        assert await pop_for(other, 1.1 * H) == []
        await until(lambda: worker.counters.completed == 1, timeout=H)
        job = await get_job(client, jid)
    assert job.state == aqless.JobState.COMPLETE
    assert "timed-out" not in history_of(job)  # not even a warning
    assert worker.heartbeats.renewals >= 2
    assert worker.counters.lost == 0


@pytest.mark.parametrize("ahead", [0.8 * H, 1.5 * H])
async def test_a_worker_ahead_by_more_than_two_thirds_of_the_lock_takes_the_job(
    server_url: str, ahead: float
) -> None:
    """Another worker's clock ahead by 0.8 H (the lock looks expired just before each
    renewal) or 1.5 H (always): its pops warn, then take the job while the holder still runs
    it, long before the grace period (10 s) would end; the holder's run is cancelled."""
    async with (
        holding(server_url, 0.0, runs_for=10 * H) as (worker, client, jid),
        skewed(server_url, "ahead", ahead) as other,
    ):
        started = time.monotonic()
        assert await pop_for(other, 4 * H) == [jid]
        taken_after = time.monotonic() - started
        await until(lambda: worker.counters.lost == 1, timeout=H)
        grace = float(await client.config.get("grace-period") or 0)
        job = await get_job(client, jid)
    assert taken_after < 2 * H < grace
    assert job.worker_name == "ahead"
    assert history_of(job).count("timed-out") >= 1  # the warning, then the reclaim
    assert worker.counters.completed == 0


async def test_a_scheduled_job_is_due_by_the_clock_of_the_worker_that_pops(
    server_url: str,
) -> None:
    """Put with a delay of 10 s by a producer at T: due for a worker whose clock reads T+10,
    whatever the real time; not for one that reads T+9.9."""
    async with (
        aqless.Client(server_url, clock=lambda: T) as producer,
        aqless.Client(server_url, worker_name="behind", clock=lambda: T + 9.9) as behind,
        aqless.Client(server_url, worker_name="ahead", clock=lambda: T + 10) as ahead,
    ):
        await producer.redis.flushall()
        jid = await producer.queues["q"].put("app.job", {}, delay=10)
        assert await behind.queues["q"].pop() is None
        job = await ahead.queues["q"].pop()
        assert job is not None
        assert job.jid == jid
        # a retry's delay counts from the retrying worker's clock, and is due by the next's
        assert await job.retry(delay=5) >= 0
        assert await behind.queues["q"].pop() is None  # T + 9.9 < T + 10 + 5
        async with aqless.Client(server_url, clock=lambda: T + 15) as later:
            again = await later.queues["q"].pop()
            assert again is not None
            assert again.jid == jid


async def test_a_producer_ahead_of_the_workers_records_negative_waits(server_url: str) -> None:
    """Wait times are the popper's now minus the putter's: a producer 5 s ahead makes them
    negative. They count in the mean, in no histogram bucket; nothing fails."""
    async with (
        aqless.Client(server_url, clock=lambda: T + 5) as producer,
        aqless.Client(server_url, worker_name="w", clock=lambda: T) as worker,
    ):
        await producer.redis.flushall()
        await producer.queues["q"].put("app.job", {})
        job = await worker.queues["q"].pop()
        assert job is not None
        await job.complete()
        stats = await worker.queues["q"].stats(T)
        assert stats.wait.count == 1
        assert stats.wait.mean == pytest.approx(-5)
        assert sum(stats.wait.histogram) == 0
        assert stats.run.count == 1  # the worker's own run time: one clock, no skew
        assert stats.run.mean == pytest.approx(0)
