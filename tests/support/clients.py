"""Helpers for the tests of the client API: a clock the test moves, a round-trip counter,
and short ways to fetch jobs. The fixtures built on them are in client_fixtures.py."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass

import aqless
import aqless.sync

# 2023-11-14 22:13:20 UTC: a realistic time, well inside its day (stats are per day).
START = 1_700_000_000.0
START_DAY = 1_699_920_000.0

WORKER = "worker-1"


class ManualClock:
    """A clock that moves only when told to: ``Client(url, clock=clock)``."""

    def __init__(self, now: float = START) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> float:
        self.now += seconds
        return self.now


class RoundTrips:
    """How many requests a client sent: each write of one command or of a whole pipeline
    is one round trip (the client then waits for the replies)."""

    def __init__(self) -> None:
        self.count = 0


@dataclass
class Counted:
    """A client, and the round trips of its connections."""

    client: aqless.Client
    round_trips: RoundTrips


async def get_job(client: aqless.Client, jid: str) -> aqless.Job:
    """The job with this jid (it must exist and not be a recurring job)."""
    job = await client.jobs.get(jid)
    assert isinstance(job, aqless.Job), f"no job {jid}: {job!r}"
    return job


async def get_recurring(client: aqless.Client, jid: str) -> aqless.RecurringJob:
    job = await client.jobs.get(jid)
    assert isinstance(job, aqless.RecurringJob), f"no recurring job {jid}: {job!r}"
    return job


async def pop_one(queue: aqless.Queue, *, worker: str | None = None) -> aqless.Job:
    """The next job of the queue (there must be one)."""
    job = await queue.pop(worker=worker)
    assert job is not None, f"{queue.name} handed out nothing"
    return job


def put_from_threads(
    queue: aqless.sync.SyncQueue | aqless.sync.SyncShardedQueue, threads: int, each: int
) -> list[str]:
    """`threads` threads, started together, each putting `each` jobs on one blocking
    client's `queue`; the jids."""
    start = threading.Barrier(threads)
    jids: list[str] = []

    def put(number: int) -> None:
        start.wait()
        for _ in range(each):
            jids.append(queue.put("app.Bulk", {"thread": number}))

    started = [threading.Thread(target=put, args=(n,)) for n in range(threads)]
    for thread in started:
        thread.start()
    for thread in started:
        thread.join()
    return jids


def in_a_forked_child(action: Callable[[], str]) -> tuple[int, str]:
    """`action()` in a forked child, killed if it takes 20 s (stuck on its parent's loop);
    the child's pid and the text `action` returned. Fails unless the child exits 0."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        signal.alarm(20)
        try:
            os.write(write, action().encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read) as pipe:
        text = pipe.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return pid, text
