"""The record an aqless worker publishes about itself, for the dashboard and ``aqless
workers``: host, pid, queues, concurrency, version, when it started, when it was last seen,
and what it completed (and so its jobs per minute).

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
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

import anyio

from aqless._connection.protocol import hash_fields
from aqless._version import __version__
from aqless._worker.counters import WorkerCounters
from aqless._worker.outage import ServerOutage
from aqless.client import Client
from aqless.errors import ConnectionLostError
from aqless.models import WorkerCounts
from aqless.sharding.client import AnyClient

PUBLISH_EVERY: Final = 10.0  # seconds between two writes of a worker's record
FIRST_AFTER: Final = 1.0  # seconds from the worker's start to its first write
TTL: Final = 60  # seconds a record outlives the last write
RATE_WINDOW: Final = 60.0  # seconds the jobs-per-minute rate looks back
RECORD_SUFFIX: Final = "aqless:w:"
INDEX_SUFFIX: Final = "aqless:workers"

logger = logging.getLogger("aqless.worker")


def record_key(client: Client, name: str) -> str:
    return f"{client.prefix}{RECORD_SUFFIX}{name}"


def index_key(client: Client) -> str:
    return client.prefix + INDEX_SUFFIX


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """What an aqless worker says of itself (`started` and `seen` are epoch seconds;
    `per_minute` is the jobs it completed per minute over the last minute)."""

    name: str
    host: str
    pid: int
    queues: tuple[str, ...]
    concurrency: int
    version: str
    started: float
    seen: float
    completed: int
    failed: int
    per_minute: float

    def fields(self) -> dict[str, str]:
        return {
            "host": self.host,
            "pid": str(self.pid),
            "queues": "\n".join(self.queues),
            "concurrency": str(self.concurrency),
            "version": self.version,
            "started": repr(self.started),
            "seen": repr(self.seen),
            "completed": str(self.completed),
            "failed": str(self.failed),
            "per_minute": f"{self.per_minute:.2f}",
        }

    @classmethod
    def parse(cls, name: str, raw: dict[str, str]) -> WorkerInfo | None:
        """The record read back, or None for one that is gone or unreadable."""
        try:
            return cls(
                name=name,
                host=raw.get("host", ""),
                pid=int(raw.get("pid", "0")),
                queues=tuple(q for q in raw.get("queues", "").split("\n") if q),
                concurrency=int(raw.get("concurrency", "0")),
                version=raw.get("version", ""),
                started=float(raw.get("started", "0")),
                seen=float(raw["seen"]),
                completed=int(raw.get("completed", "0")),
                failed=int(raw.get("failed", "0")),
                per_minute=float(raw.get("per_minute", "0")),
            )
        except (KeyError, ValueError):
            return None


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
    ) -> None:
        self.client = client
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
        )

    async def publish(self) -> None:
        now = self.client.clock()
        record, index = record_key(self.client, self.name), index_key(self.client)
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
        await anyio.sleep(FIRST_AFTER)  # the worker's first pops and offers go first
        while True:
            try:
                await self.publish()
            except ConnectionLostError as error:  # the next write tries again
                logger.debug("worker %s: publishing its record failed: %s", self.name, error)
                self.outage.failed(error)
            except Exception as error:
                logger.warning("worker %s: publishing its record failed: %s", self.name, error)
            else:
                self.outage.answered()
            await anyio.sleep(PUBLISH_EVERY)

    async def withdraw(self) -> None:
        with anyio.move_on_after(2.0, shield=True):
            try:
                await self.client.protocol.plain_many(
                    "worker.withdraw_record",
                    [
                        ("DEL", record_key(self.client, self.name)),
                        ("ZREM", index_key(self.client), self.name),
                    ],
                )
            except Exception as error:
                logger.warning("worker %s: deleting its record failed: %s", self.name, error)


# -- reading -------------------------------------------------------------------------------


async def infos(client: Client) -> dict[str, WorkerInfo]:
    """The records of the workers of `client`'s namespace that are alive, by name."""
    protocol = client.protocol
    listed = await protocol.plain("workers.records", "ZRANGE", index_key(client), 0, -1)
    names = [str(name) for name in listed]
    raws = await protocol.plain_many(
        "workers.records", [("HGETALL", record_key(client, name)) for name in names]
    )
    found: dict[str, WorkerInfo] = {}
    for name, raw in zip(names, raws, strict=True):
        info = WorkerInfo.parse(name, hash_fields(raw))
        if info is not None:
            found[name] = info
    return found


def merged(first: WorkerInfo, second: WorkerInfo) -> WorkerInfo:
    """One sharded worker's records on two shards: the newer one, with both counts."""
    newer = first if first.seen >= second.seen else second
    return replace(
        newer,
        started=min(first.started, second.started),
        completed=first.completed + second.completed,
        failed=first.failed + second.failed,
        per_minute=first.per_minute + second.per_minute,
    )


async def all_infos(client: AnyClient) -> dict[str, WorkerInfo]:
    """As `infos`, over every server (each shard of a sharded deployment)."""
    found: dict[str, WorkerInfo] = {}
    for shard in client.servers:
        for name, info in (await infos(shard)).items():
            found[name] = merged(found[name], info) if name in found else info
    return found


@dataclass(frozen=True, slots=True)
class SeenWorker:
    """A worker: what qless counts of it (the jobs it holds) and its record, if any."""

    counts: WorkerCounts
    info: WorkerInfo | None


async def seen_workers(client: AnyClient) -> tuple[list[SeenWorker], list[str]]:
    """The workers: those that hold jobs or publish a record, by name; and the names of
    the other clients qless lists (they popped, hold nothing and publish no record: another
    client's idle worker, or a client that never ran a job)."""
    counts = {worker.name: worker for worker in await client.workers.counts()}
    records = await all_infos(client)
    workers: list[SeenWorker] = []
    others: list[str] = []
    for name in sorted(counts.keys() | records.keys()):
        held = counts.get(name) or WorkerCounts(name=name, jobs=0, stalled=0)
        info = records.get(name)
        if info is None and not held.jobs and not held.stalled:
            others.append(name)
        else:
            workers.append(SeenWorker(held, info))
    return workers, others
