"""A drain through a slow, lossy network (tests.faults.netem): in-process workers reach the
server only through the proxy; the test reads and accounts directly.

Each job's code sleeps for the time its data says, then does its side effect
(an RPUSH of its jid, over the direct connection, so that only the job running twice can
repeat it), and records its run: when it started and when it ended, however it ended. Its
lock is lost when the server takes the job from its worker: a ``timed-out`` entry of its
history (the grace period is 0, so the pop that finds the lock expired takes the job). A run
may go on past that moment only until its worker hears of it: at worst the next renewal,
a third of the lock later. That gap is the run's overrun."""

from __future__ import annotations

import contextlib
import random
import time
from dataclasses import dataclass, field

import anyio

import aqless
from tests.faults.harness import DONE, QUEUE, OwnServer, Report, account, drained, free_port
from tests.faults.netem import Conditions, NetemProxy, Tally
from tests.support.worker import make_worker, one, running

JOB_CLASS = "slow.work"


@dataclass(slots=True)
class Run:
    """One run of a job's code."""

    jid: str
    worker: str
    started: float
    ended: float = 0.0


@dataclass(slots=True)
class SlowDrain:
    """What a drain through the proxy found."""

    report: Report
    seconds: float
    lock_losses: int  # timed-out entries in the jobs' histories
    worker_lost: int  # runs the workers cancelled because their job was taken away
    overruns: list[float]  # per run whose lock was lost while it ran: seconds past the loss
    tally: Tally
    renewal: float  # the lock's renewal interval: a third of it
    runs: list[Run] = field(default_factory=list)

    def __str__(self) -> str:
        worst = max(self.overruns, default=0.0)
        return (
            f"{self.report}; {self.seconds:.1f} s, lock losses {self.lock_losses} (runs "
            f"cancelled {self.worker_lost}), worst overrun {worst:.2f} s of {self.renewal:.2f}; "
            f"network: {self.tally}"
        )


async def slow_drain(
    jobs: int,
    conditions: Conditions,
    *,
    workers: int = 2,
    concurrency: int = 25,
    lock: int = 3,
    longest: float = 2.0,
    timeout: float = 120,
    prefetch: int = 0,
) -> SlowDrain:
    """Put `jobs` jobs (each running 0.1 s to `longest` s) and drain them with `workers`
    workers of `concurrency` through a NetemProxy with `conditions`; locks of `lock` s."""
    server = OwnServer(port=free_port())
    server.start()
    try:
        async with aqless.Client(server.url) as client:
            await client.config.set("heartbeat", lock)
            await client.config.set("grace-period", 0)
            await client.config.set("jobs-history-count", 10_000_000)
            jids = await _put(client, jobs, longest, conditions.seed)
            runs: list[Run] = []
            async with NetemProxy("127.0.0.1", server.port, conditions) as proxy:
                lost, seconds = await _work(
                    client, proxy.url, runs, len(jids), workers, concurrency, timeout, prefetch
                )
            report = await account(client, server.url, jids)
            losses = await _losses(client, jids)
        return SlowDrain(
            report=report,
            seconds=seconds,
            lock_losses=sum(len(moments) for moments in losses.values()),
            worker_lost=lost,
            overruns=overruns(runs, losses),
            tally=proxy.tally,
            renewal=lock / 3,
            runs=runs,
        )
    finally:
        server.close()


async def _put(client: aqless.Client, count: int, longest: float, seed: int) -> list[str]:
    durations = random.Random(seed)  # noqa: S311
    requests = [
        aqless.PutRequest(JOB_CLASS, {"sleep": round(durations.uniform(0.1, longest), 2)})
        for _ in range(count)
    ]
    jids: list[str] = []
    for start in range(0, count, 5_000):
        jids += await client.queues[QUEUE].put_many(requests[start : start + 5_000])
    return jids


async def _work(
    direct: aqless.Client,
    url: str,
    runs: list[Run],
    count: int,
    workers: int,
    concurrency: int,
    timeout: float,
    prefetch: int = 0,
) -> tuple[int, float]:
    """Run the workers until `count` jobs are complete: (runs they cancelled, seconds)."""

    async def work(job: aqless.Job) -> None:
        run = Run(job.jid, job.client.worker_name, time.time())
        runs.append(run)
        try:
            await anyio.sleep(float(job.data["sleep"]))  # a cancel ends it at once
            await direct.redis.rpush(DONE, job.jid)
        finally:
            run.ended = time.time()

    async with contextlib.AsyncExitStack() as stack:
        started = []
        for number in range(workers):
            client = aqless.Client(url, worker_name=f"slow-{number}")
            await stack.enter_async_context(client)
            worker = make_worker(
                client,
                [QUEUE],
                one(work, JOB_CLASS),
                concurrency=concurrency,
                interval=0.5,
                prefetch=prefetch,
            )
            started.append(worker)
            await stack.enter_async_context(running(worker, timeout=30))
        seconds = await drained(direct, count, timeout)
        return sum(worker.counters.lost for worker in started), seconds


async def _losses(client: aqless.Client, jids: list[str]) -> dict[str, list[float]]:
    """The moments each job's lock was taken away, by jid."""
    found: dict[str, list[float]] = {}
    for start in range(0, len(jids), 1_000):
        for job in await client.jobs.get_many(jids[start : start + 1_000]):
            moments = [entry.when for entry in job.history if entry.what == "timed-out"]
            if moments:
                found[job.jid] = moments
    return found


def overruns(runs: list[Run], losses: dict[str, list[float]]) -> list[float]:
    """For each run whose lock was lost while it ran: how long it ran on after."""
    overruns: list[float] = []
    for run in runs:
        during = [moment for moment in losses.get(run.jid, []) if moment >= run.started]
        if during and min(during) < run.ended:
            overruns.append(run.ended - min(during))
    return overruns
