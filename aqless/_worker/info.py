"""The record an aqless worker publishes about itself (`aqless.models.WorkerInfo`, read by
``client.workers.records()`` for the dashboard and ``aqless workers``): host, pid, queues,
concurrency, version, when it started, when it was last seen, what it completed (and so
its jobs per minute), and its mode (running, paused, quiet, stopping: written at once when
it changes).

The record is a hash ``<prefix>aqless:w:<name>`` (no qless key starts with ``ql:aqless:``)
written again every `PUBLISH_EVERY` seconds with a time to live of `TTL`, so a worker that
died leaves nothing behind for long; an index ``<prefix>aqless:workers`` (a sorted set of
names by last seen, trimmed and given the same TTL on each write) lists the live ones. A
worker that stops deletes its record. Other qless clients publish none: their workers are
known only by what qless keeps (the jobs they hold).
"""

from __future__ import annotations

import logging
import os
import socket
from collections import deque
from collections.abc import Callable, Sequence
from typing import Final

import anyio

from aqless._concurrency.wakeup import Wakeup
from aqless._version import __version__
from aqless._worker.counters import WorkerCounters
from aqless._worker.outage import ServerOutage
from aqless.client import Client, worker_index_key, worker_record_key
from aqless.errors import ConnectionLostError
from aqless.models import WorkerInfo

PUBLISH_EVERY: Final = 10.0  # seconds between two writes of a worker's record
FIRST_AFTER: Final = 1.0  # seconds from the worker's start to its first write
TTL: Final = 60  # seconds a record outlives the last write
RATE_WINDOW: Final = 60.0  # seconds the jobs-per-minute rate looks back

logger = logging.getLogger("aqless.worker")


class InfoPublisher:
    """Writes a running worker's record every `PUBLISH_EVERY` seconds (`run`), and deletes
    it when the worker stops (`withdraw`). A failed write is never fatal: one that found
    no server tells the worker's `outage` (which says so in a few lines however long it
    lasts), any other is logged."""

    def __init__(
        self,
        client: Client,
        name: str,
        queues: Sequence[str],
        concurrency: int,
        counters: WorkerCounters,
        outage: ServerOutage | None = None,
        mode: Callable[[], str] = lambda: "running",
    ) -> None:
        self.client = client
        self.mode = mode
        self._soon = Wakeup()
        self.outage = outage if outage is not None else ServerOutage(name)
        self.name = name
        self.queues = tuple(queues)
        self.concurrency = concurrency
        self.counters = counters
        self.started = client.clock()
        self.host = socket.gethostname()
        self.pid = os.getpid()
        self._samples: deque[tuple[float, int]] = deque()

    def per_minute(self, now: float) -> float:
        """Jobs completed per minute over the last `RATE_WINDOW` seconds (since the start
        for a younger worker)."""
        self._samples.append((now, self.counters.completed))
        while len(self._samples) > 1 and now - self._samples[1][0] >= RATE_WINDOW:
            self._samples.popleft()
        then, completed_then = self._samples[0]
        if len(self._samples) == 1:
            then, completed_then = self.started, 0
        elapsed = now - then
        done = self.counters.completed - completed_then
        return done * 60.0 / max(elapsed, 1.0)  # no spike from a worker a moment old

    def info(self, now: float) -> WorkerInfo:
        return WorkerInfo(
            name=self.name,
            host=self.host,
            pid=self.pid,
            queues=self.queues,
            concurrency=self.concurrency,
            version=__version__,
            started=self.started,
            seen=now,
            completed=self.counters.completed,
            failed=self.counters.failed,
            per_minute=self.per_minute(now),
            mode=self.mode(),
        )

    async def publish(self) -> None:
        now = self.client.clock()
        record = worker_record_key(self.client.prefix, self.name)
        index = worker_index_key(self.client.prefix)
        fields = [text for pair in self.info(now).fields().items() for text in pair]
        await self.client.protocol.plain_many(
            "worker.publish",
            [
                ("HSET", record, *fields),
                ("EXPIRE", record, TTL),
                ("ZADD", index, repr(now), self.name),
                ("ZREMRANGEBYSCORE", index, "-inf", repr(now - TTL)),
                ("EXPIRE", index, TTL),
            ],
        )

    async def run(self) -> None:
        with anyio.move_on_after(FIRST_AFTER):  # the worker's first pops and offers go first
            await self._soon.event.wait()  # unless its mode changed meanwhile
        while True:
            wake = self._soon.event  # before the write: a change during it is not lost
            try:
                await self.publish()
            except ConnectionLostError as error:  # the next write tries again
                logger.debug("worker %s: publishing its record failed: %s", self.name, error)
                self.outage.failed(error)
            except Exception as error:
                logger.warning("worker %s: publishing its record failed: %s", self.name, error)
            else:
                self.outage.answered()
            with anyio.move_on_after(PUBLISH_EVERY):
                await wake.wait()

    def publish_soon(self) -> None:
        """The worker's mode changed: write the record now, not at the next turn."""
        self._soon.fire()

    async def withdraw(self) -> None:
        with anyio.move_on_after(2.0, shield=True):
            try:
                await self.client.protocol.plain_many(
                    "worker.withdraw_record",
                    [
                        ("DEL", worker_record_key(self.client.prefix, self.name)),
                        ("ZREM", worker_index_key(self.client.prefix), self.name),
                    ],
                )
            except Exception as error:
                logger.warning("worker %s: deleting its record failed: %s", self.name, error)
