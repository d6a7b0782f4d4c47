"""``aqless stats --scaling``: every queue's (or one queue's) scaling signals as a table."""

from __future__ import annotations

from collections.abc import Sequence

import anyio

import aqless
from aqless.cli.render import TableView, duration, table
from aqless.cli.runtime import AnyClient
from aqless.ops import known

COLUMNS = (
    "queue",
    "waiting#",
    "running#",
    "oldest wait#",
    "wait p50#",
    "wait p95#",
    "run mean#",
    "done/min#",
    "over#",
    "slots#",
    "model p95#",
)


async def read_scaling(
    client: AnyClient, queue: str | None, target: float, sample: float
) -> list[aqless.QueueScaling]:
    """The scaling signals of `queue` (None: every queue); with `sample` seconds, a second
    reading that far after the first, its throughput taken between the two."""
    if queue is None:
        readings = await client.queues.scaling(target)
    else:
        await known.require(client, "queue", queue)
        readings = [await client.queues[queue].scaling(target)]
    if sample <= 0:
        return readings
    await anyio.sleep(sample)
    if queue is None:
        return await client.queues.scaling(target, previous=readings)
    return [await client.queues[queue].scaling(target, previous=readings[0])]


def _seconds(value: float | None) -> str:
    return "-" if value is None else duration(value)


def scaling_table(target: float, readings: Sequence[aqless.QueueScaling]) -> TableView:
    """One row per queue: what waits, the day's wait percentiles (upper bounds) and run
    mean, the throughput and the window it covers, and the slots for the target."""
    rows = [
        (
            r.queue,
            r.waiting,
            r.running,
            duration(r.oldest_wait) if r.waiting else "-",
            _seconds(r.wait_p50),
            _seconds(r.wait_p95),
            _seconds(r.run_mean),
            f"{r.throughput:.1f}",
            duration(r.window),
            r.slots,
            _seconds(r.predicted_p95),
        )
        for r in readings
    ]
    return table(f"worker slots for a p95 wait under {duration(target)}", COLUMNS, rows)
