"""Figures per job class and queue: run time p50/p95/p99, failure rate and throughput over
this hour and over the last day, read from what the script keeps (what `aqless stats
--by-class` and the dashboard's Classes page show).

The script counts each completion and failure of a job in its queue's hour hash
``ql:aqless:tp:<hour>:<queue>`` (aqless's own, expiring 25 hours after its hour began;
stats.lua's Stats.tick and Stats.by_class): ``<klass>|r<i>`` counts the class's completions
of the hour whose run took at most 2^(i/2) ms (their sum: its completed jobs), ``<klass>|f``
its failed jobs. So a
quantile here is the upper bound of its bucket (within a factor of √2), as the protocol's own
histograms give upper bounds. Reading costs one HGETALL per queue and hour (24 a queue, in
one round trip a server), whatever the number of jobs.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Final

from aqless._connection.protocol import hash_fields
from aqless.client import Client
from aqless.sharding.client import AnyClient

HOURS: Final = 24  # the day: this hour and the 23 before
WINDOWS: Final = ("hour", "day")
QUANTILES: Final = (("p50", 0.5), ("p95", 0.95), ("p99", 0.99))


def bucket_bound(bucket: int) -> float:
    """The longest run (seconds) bucket `bucket` counts: 2^(bucket/2) ms."""
    return float(2 ** (bucket / 2) / 1000)


@dataclass
class _Counts:
    completed: int = 0
    failed: int = 0
    buckets: dict[int, int] = field(default_factory=dict)

    def add(self, kind: str, count: int) -> None:
        if kind == "f":
            self.failed += count
        elif kind.startswith("r") and kind[1:].isdigit():  # a completion, by its run time
            bucket = int(kind[1:])
            self.buckets[bucket] = self.buckets.get(bucket, 0) + count
            self.completed += count

    def quantile(self, share: float) -> float | None:
        runs = sum(self.buckets.values())
        if runs == 0:
            return None
        wanted, seen = math.ceil(share * runs), 0
        for bucket in sorted(self.buckets):
            seen += self.buckets[bucket]
            if seen >= wanted:
                return bucket_bound(bucket)
        return bucket_bound(max(self.buckets))  # unreachable: the sum is `runs`


@dataclass(frozen=True, slots=True)
class ClassFigures:
    """One job class in one queue over one window (``hour``: since this hour began; ``day``:
    this hour and the 23 before). Run times in seconds (upper bounds, None without a
    completion); `per_minute` counts completions; `failure_rate` is failed / (completed +
    failed), None without either."""

    queue: str
    klass: str
    window: str
    since: int
    completed: int
    failed: int
    failure_rate: float | None
    per_minute: float
    p50: float | None
    p95: float | None
    p99: float | None
    #: runs by bucket: [longest run of the bucket (seconds), count], shortest first
    histogram: list[list[float]]

    def document(self) -> dict[str, Any]:
        return asdict(self)


def _key(client: Client, hour: int, queue: str) -> str:
    return f"{client.prefix}aqless:tp:{hour}:{queue}"


async def _read(
    client: AnyClient, queues: Sequence[str], hours: Sequence[int]
) -> dict[tuple[str, str], dict[int, _Counts]]:
    """(queue, class) -> hour -> counts, every shard's summed."""
    found: dict[tuple[str, str], dict[int, _Counts]] = {}
    calls = [(queue, hour) for queue in queues for hour in hours]
    for plain in client.servers:
        replies = await plain.protocol.plain_many(
            "classes.figures", [("HGETALL", _key(plain, hour, queue)) for queue, hour in calls]
        )
        for (queue, hour), reply in zip(calls, replies, strict=True):
            for name, value in hash_fields(reply).items():
                klass, bar, kind = name.rpartition("|")
                if not bar or not value.isdigit():
                    continue  # a minute's count (c<minute>), not a class's
                by_hour = found.setdefault((queue, klass), {})
                by_hour.setdefault(hour, _Counts()).add(kind, int(value))
    return found


def _figures(
    queue: str, klass: str, window: str, since: int, now: float, parts: Sequence[_Counts]
) -> ClassFigures:
    total = _Counts()
    for part in parts:
        total.completed += part.completed
        total.failed += part.failed
        for bucket, count in part.buckets.items():
            total.buckets[bucket] = total.buckets.get(bucket, 0) + count
    ended = total.completed + total.failed
    minutes = max((now - since) / 60, 1.0)
    quantiles = {name: total.quantile(share) for name, share in QUANTILES}
    return ClassFigures(
        queue=queue,
        klass=klass,
        window=window,
        since=since,
        completed=total.completed,
        failed=total.failed,
        failure_rate=total.failed / ended if ended else None,
        per_minute=total.completed / minutes,
        histogram=[[bucket_bound(b), float(n)] for b, n in sorted(total.buckets.items())],
        **quantiles,
    )


async def class_figures(
    client: AnyClient, queues: Sequence[str] | None = None, now: float | None = None
) -> list[ClassFigures]:
    """Each class of each queue (all queues by default) over this hour and over the day,
    busiest first (by the day's completed and failed jobs), the hour before the day."""
    moment = time.time() if now is None else now
    current = int(moment - moment % 3600)
    hours = [current - 3600 * back for back in range(HOURS)]
    names = list(queues) if queues is not None else await client.queues.names()
    found = await _read(client, names, hours)
    day_start = hours[-1]
    figures: list[tuple[int, ClassFigures, ClassFigures]] = []
    for (queue, klass), by_hour in found.items():
        hour = _figures(queue, klass, "hour", current, moment, [by_hour.get(current, _Counts())])
        day = _figures(queue, klass, "day", day_start, moment, list(by_hour.values()))
        figures.append((day.completed + day.failed, hour, day))
    figures.sort(key=lambda entry: (-entry[0], entry[1].queue, entry[1].klass))
    return [figure for _, hour, day in figures for figure in (hour, day)]
