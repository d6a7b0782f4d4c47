"""A queue's scaling signals: what it holds, how long its jobs wait and run, how fast it is
served, and how many worker slots would keep its p95 wait under a target.

Everything comes from reads every qless client shares: the queue's counts, the job a pop
would take next, and the day's statistics (wait and run histograms with their means, and
the run count, which is the count of completions).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Final, Protocol

import anyio

from aqless import rules
from aqless._concurrency.task_groups import own_errors
from aqless.errors import InvalidArgumentError
from aqless.models import Durations, HistoryEntry, QueueCounts, QueueStats
from aqless.scaling.erlang import MOST_SLOTS, slots_for, wait_quantile

__all__ = [
    "BACKLOG_DRAIN",
    "QueueScaling",
    "ScalingReads",
    "every_queue_scaling",
    "histogram_quantile",
    "read_scaling",
]

DAY: Final = 86400
BACKLOG_DRAIN: Final = 60.0
"""Seconds in which the recommendation would clear the jobs waiting beyond what a queue
meeting its target holds (added to the arrival rate as ``excess / BACKLOG_DRAIN``)."""
_QUANTILE: Final = 0.95


class _Peeked(Protocol):
    @property
    def history(self) -> tuple[HistoryEntry, ...]: ...


class ScalingReads(Protocol):
    """The reads of a queue that its scaling signals come from (any variant's queue)."""

    @property
    def name(self) -> str: ...
    async def counts(self) -> QueueCounts: ...
    async def stats(self, date: float | None = None) -> QueueStats: ...
    async def peek(self, count: int = 1, *, offset: int = 0) -> Sequence[_Peeked]: ...


@dataclass(frozen=True, slots=True)
class QueueScaling:
    """A queue's scaling signals at one moment, and the slots its target needs.

    Attributes:
        queue: the queue's name.
        at: when it was read (seconds since the epoch, the client's clock).
        waiting: jobs waiting to be popped.
        running: jobs held by workers (stalled ones included).
        oldest_wait: seconds the job a pop would take next has waited since it was put
            (0 when none waits); with one priority, the oldest waiting job.
        wait_p50, wait_p95: today's median and 95th percentile wait, in seconds, read
            from the stats histogram: upper bounds (the bucket's end, or the mean's Markov
            bound when that is lower); None before any job was popped today.
        run_mean: today's mean run time (seconds) of completed jobs; None before any.
        completed: jobs completed today (the day's run count): the counter the
            throughput is worked out from.
        window: the seconds the throughput covers: since `previous`'s reading, or since
            the start of the day (UTC) without one.
        throughput: completions per minute over `window`.
        arrival_rate: jobs per second the model is given: the throughput, plus the
            waiting jobs beyond what a queue meeting the target holds, spread over
            `BACKLOG_DRAIN` seconds.
        target_p95: the p95 wait (seconds) the recommendation is for.
        slots: the fewest worker slots (jobs running at once, over every worker) for which
            the M/M/c model's p95 wait is at most `target_p95`; 0 when nothing arrives and
            nothing waits or runs; at least 1 when something does, also before any run
            time is known.
        predicted_p95: the model's p95 wait with `slots` slots (None without a model).
        utilization: the share of `slots` the model expects busy.

    Examples:
        ```python
        reading = await client.queues["emails"].scaling(target_p95=2.0)
        print(reading.waiting, reading.throughput, reading.slots)
        later = await client.queues["emails"].scaling(2.0, previous=reading)
        ```
    """

    queue: str
    at: float
    waiting: int
    running: int
    oldest_wait: float
    wait_p50: float | None
    wait_p95: float | None
    run_mean: float | None
    completed: int
    window: float
    throughput: float
    arrival_rate: float
    target_p95: float
    slots: int
    predicted_p95: float | None
    utilization: float

    def as_dict(self) -> dict[str, Any]:
        """The record as a flat JSON-ready mapping.

        Examples:
            ```python
            reading = await client.queues["emails"].scaling(target_p95=2.0)
            print(json.dumps(reading.as_dict()))
            ```
        """
        return asdict(self)

    def since(self, previous: QueueScaling | None) -> QueueScaling:
        """This reading with its throughput (and what follows from it) taken over the time
        since `previous`, an earlier reading of the same queue on the same day; itself
        worked out over the day when `previous` cannot serve.

        Examples:
            ```python
            first = await client.queues["emails"].scaling(2.0)
            later = (await client.queues["emails"].scaling(2.0)).since(first)
            ```
        """
        return scaling_record(
            self.queue,
            self.at,
            waiting=self.waiting,
            running=self.running,
            oldest_wait=self.oldest_wait,
            wait_quantiles=(self.wait_p50, self.wait_p95),
            run_mean=self.run_mean,
            completed=self.completed,
            target_p95=self.target_p95,
            previous=previous,
        )


def checked_target(target_p95: float) -> float:
    """`target_p95`, refused unless a positive finite number of seconds."""
    return float(rules.check("target_p95", target_p95, "scaling"))


async def read_scaling(
    queue: ScalingReads, now: float, target_p95: float, previous: QueueScaling | None = None
) -> QueueScaling:
    """`queue`'s scaling signals at `now` (three reads: counts, the next job, the day's
    statistics)."""
    target = checked_target(target_p95)
    counts = await queue.counts()
    head = await queue.peek(1)
    stats = await queue.stats(now)
    return scaling_record(
        queue.name,
        now,
        waiting=counts.waiting,
        running=counts.running + counts.stalled,
        oldest_wait=_waited(head, now),
        wait_quantiles=(
            histogram_quantile(stats.wait, 0.5),
            histogram_quantile(stats.wait, _QUANTILE),
        ),
        run_mean=stats.run.mean if stats.run.count else None,
        completed=stats.run.count,
        target_p95=target,
        previous=previous,
    )


class _ScalingQueue(Protocol):
    async def scaling(
        self, target_p95: float, *, previous: QueueScaling | None = None
    ) -> QueueScaling: ...


class _Queues(Protocol):
    async def names(self) -> list[str]: ...
    def __getitem__(self, name: str) -> _ScalingQueue: ...


async def every_queue_scaling(
    queues: _Queues, target_p95: float, previous: Sequence[QueueScaling] = ()
) -> list[QueueScaling]:
    """Every queue's scaling signals, each over the time since its reading in `previous`."""
    checked_target(target_p95)
    earlier = {reading.queue: reading for reading in previous}
    names = await queues.names()
    found: dict[str, QueueScaling] = {}

    async def read(name: str) -> None:
        found[name] = await queues[name].scaling(target_p95, previous=earlier.get(name))

    with own_errors():  # a failed read raises its own typed error
        async with anyio.create_task_group() as tasks:  # the queues' reads at once
            for name in names:
                tasks.start_soon(read, name)
    return [found[name] for name in names]


def scaling_record(
    queue: str,
    at: float,
    *,
    waiting: int,
    running: int,
    oldest_wait: float,
    wait_quantiles: tuple[float | None, float | None],
    run_mean: float | None,
    completed: int,
    target_p95: float,
    previous: QueueScaling | None,
) -> QueueScaling:
    """The record of what was read, with the throughput and the recommendation."""
    done, window = _completions(queue, at, completed, previous)
    rate = done / window if window > 0 else 0.0
    excess = max(0.0, waiting - rate * target_p95)
    arrival = rate + excess / BACKLOG_DRAIN
    slots, predicted = 0, None
    if run_mean is not None and arrival > 0:
        try:
            slots = slots_for(arrival, run_mean, target_p95, _QUANTILE)
        except InvalidArgumentError:  # the target needs more than it looks for: the fewest
            # slots that keep up, at least the most it looks for (the target is then missed)
            slots = max(MOST_SLOTS, math.floor(arrival * run_mean) + 1)
    if slots == 0 and waiting + running > 0:
        slots = 1
    if run_mean is not None and slots > 0:
        predicted = wait_quantile(slots, arrival, run_mean, _QUANTILE)
    utilization = arrival * run_mean / slots if run_mean is not None and slots else 0.0
    return QueueScaling(
        queue=queue,
        at=at,
        waiting=waiting,
        running=running,
        oldest_wait=oldest_wait,
        wait_p50=wait_quantiles[0],
        wait_p95=wait_quantiles[1],
        run_mean=run_mean,
        completed=completed,
        window=window,
        throughput=rate * 60,
        arrival_rate=arrival,
        target_p95=target_p95,
        slots=slots,
        predicted_p95=predicted,
        utilization=utilization,
    )


def _completions(
    queue: str, at: float, completed: int, previous: QueueScaling | None
) -> tuple[int, float]:
    """Completions and the seconds they took: since `previous` when it is an earlier
    reading of this queue on this day, else since the day began."""
    day_start = at - at % DAY
    if (
        previous is not None
        and previous.queue == queue
        and day_start <= previous.at < at
        and previous.completed <= completed
    ):
        return completed - previous.completed, at - previous.at
    return completed, at - day_start


def _waited(head: Sequence[_Peeked], now: float) -> float:
    """Seconds the first of `head` has waited since it was last put (0 when none)."""
    if not head:
        return 0.0
    history = head[0].history
    puts = [entry.when for entry in history if entry.what == "put"]
    since = puts[-1] if puts else (history[0].when if history else now)
    return max(0.0, now - since)


def _bucket_end(index: int) -> float:
    """Where histogram bucket `index` ends (seconds 0-59, minutes 1-59, hours 1-23, days
    1-6)."""
    if index < 60:
        return index + 1.0
    if index < 119:
        return (index - 58) * 60.0
    if index < 142:
        return (index - 117) * 3600.0
    return (index - 140) * float(DAY)


def histogram_quantile(durations: Durations, quantile: float) -> float | None:
    """An upper bound of the `quantile` of a day's times: the end of the histogram bucket
    that holds it, or the mean over ``1 - quantile`` (Markov's bound) when that is lower;
    None with no samples."""
    total = sum(durations.histogram)
    if total == 0:
        return None
    wanted = quantile * total
    seen = 0
    end = _bucket_end(len(durations.histogram) - 1)
    for index, count in enumerate(durations.histogram):
        seen += count
        if count and seen >= wanted:
            end = _bucket_end(index)
            break
    return min(end, durations.mean / (1 - quantile))
