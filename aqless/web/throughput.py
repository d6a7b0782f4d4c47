"""A queue's completed and failed jobs per minute over the last day, as the script counts
them (``ql:aqless:tp:<hour>:<queue>``, see stats.lua's Stats.tick), and the queue page's
two charts of them: the last hour by minute and the last day by hour."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Final

from starlette.requests import Request

from aqless._connection.protocol import hash_fields
from aqless.client import Client
from aqless.sharding.client import AnyClient
from aqless.web.charts import Chart, grouped_bars
from aqless.web.reads import JSON, Loader

HOURS: Final = 25  # the hashes read: the last day, and the hour it starts in
KINDS: Final = (("completed", "c"), ("failed", "f"))

#: minute (epoch seconds at its start) -> (completed, failed)
Minutes = dict[int, tuple[int, int]]


def key(client: Client, hour: int, queue: str) -> str:
    return f"{client.prefix}aqless:tp:{hour}:{queue}"


async def _minutes_of(client: Client, queue: str, hours: Sequence[int]) -> Minutes:
    replies = await client.protocol.plain_many(
        "queue.throughput", [("HGETALL", key(client, hour, queue)) for hour in hours]
    )
    found: Minutes = {}
    for hour, reply in zip(hours, replies, strict=True):
        for name, raw_value in hash_fields(reply).items():
            try:
                minute, count = int(name[1:]), int(raw_value)
            except ValueError:
                continue
            if name[:1] not in ("c", "f") or not 0 <= minute < 60:
                continue
            at = hour + minute * 60
            completed, failed = found.get(at, (0, 0))
            found[at] = (
                (completed + count, failed) if name[0] == "c" else (completed, failed + count)
            )
    return found


async def per_minute(client: AnyClient, queue: str, now: float | None = None) -> Minutes:
    """The queue's counts by minute over the last `HOURS` hours (every shard's, summed)."""
    moment = time.time() if now is None else now
    current = int(moment - moment % 3600)
    hours = [current - 3600 * k for k in range(HOURS)]
    total: Minutes = {}
    for plain in client.servers:
        for at, (completed, failed) in (await _minutes_of(plain, queue, hours)).items():
            before = total.get(at, (0, 0))
            total[at] = (before[0] + completed, before[1] + failed)
    return total


def series(minutes: Minutes, starts: Sequence[int], step: int) -> list[tuple[str, list[float]]]:
    """For each kind, the sum over [start, start + step) of each of `starts`."""
    drawn: list[tuple[str, list[float]]] = []
    for index, (name, _) in enumerate(KINDS):
        values = [
            float(
                sum(counts[index] for at, counts in minutes.items() if start <= at < start + step)
            )
            for start in starts
        ]
        drawn.append((name, values))
    return drawn


def _clock(epoch: int) -> str:
    return time.strftime("%H:%M", time.gmtime(epoch))


def throughput_charts(document: dict[str, Any]) -> list[Chart]:
    """The last hour by minute and the last day by hour, from `throughput_document`."""
    minutes: Minutes = {int(at): (c, f) for at, c, f in document["minutes"]}
    now = int(document["now"])
    this_minute = now - now % 60
    last_hour = [this_minute - 60 * k for k in range(59, -1, -1)]
    this_hour = now - now % 3600
    last_day = [this_hour - 3600 * k for k in range(23, -1, -1)]
    return [
        grouped_bars(
            "Jobs per minute, last hour (UTC)",
            [_clock(at) for at in last_hour],
            series(minutes, last_hour, 60),
            x_label=str,
        ),
        grouped_bars(
            "Jobs per hour, last day (UTC)",
            [_clock(at) for at in last_day],
            series(minutes, last_day, 3600),
            x_label=str,
        ),
    ]


def throughput_document(minutes: Minutes, now: float) -> JSON:
    """`minutes` as JSON: ``[minute, completed, failed]`` rows, oldest first."""
    rows = [[at, completed, failed] for at, (completed, failed) in sorted(minutes.items())]
    return {"now": now, "minutes": rows}


def with_throughput(load: Loader) -> Loader:
    """The queue page's loader, with the queue's throughput under ``throughput``."""

    async def loaded(client: AnyClient, request: Request) -> JSON:
        data = await load(client, request)
        now = time.time()
        minutes = await per_minute(client, request.path_params["name"], now)
        return {**data, "throughput": throughput_document(minutes, now)}

    return loaded
