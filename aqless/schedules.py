"""Cron schedules for recurring jobs.

The script has no time zone database, so the client computes a template's fire times here
(with cronsim, whose rules are Debian cron's: a job at a fixed time that falls in the hour
skipped by a spring-forward runs at the first minute after it; one that falls in the hour
repeated by a fall-back runs once, at its first occurrence; a job whose hour field is ``*``
follows real time through both) and stores them beside the template (see cron.lua). Workers
top the schedules up as they run low: ``keep_schedules``.
"""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import anyio
from cronsim import CronSim, CronSimError

from aqless.errors import AqlessError, ConfigurationError, InvalidArgumentError

if TYPE_CHECKING:
    from aqless.contracts import ScriptClient as Client

logger = logging.getLogger(__name__)

#: How many fire times a schedule holds at most, how far ahead it reaches (unless it
#: would hold fewer than ``RUNS_AT_LEAST``).
RUNS_AHEAD = 100
RUNS_AT_LEAST = 10
HORIZON = 7 * 86400.0
#: How long a worker's claim on a schedule to top up lasts, and how often workers look.
REFILL_LEASE = 60.0
REFILL_EVERY = 60.0


@dataclass(frozen=True)
class CronSchedule:
    """A checked cron expression (5 fields, or 6 with seconds first) in a time zone."""

    expression: str
    tz: str

    @classmethod
    def of(cls, expression: str, tz: str = "UTC") -> CronSchedule:
        """The schedule, or InvalidArgumentError naming what is wrong with it."""
        schedule = cls(expression.strip(), tz)
        try:
            zone = schedule.zone()
        except (ZoneInfoNotFoundError, ValueError) as error:
            raise InvalidArgumentError("recur", f"unknown time zone {tz!r}") from error
        try:
            CronSim(schedule.expression, datetime.now(zone))
        except CronSimError as error:
            raise InvalidArgumentError("recur", f"bad cron {expression!r}: {error}") from error
        return schedule

    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.tz)

    def fire_times(
        self, after: float, *, runs: int = RUNS_AHEAD, horizon: float = HORIZON
    ) -> list[float]:
        """The unix times it fires after `after`: at most `runs`, within `horizon` seconds
        (but at least ``RUNS_AT_LEAST``, however far)."""
        times: list[float] = []
        for moment in CronSim(self.expression, datetime.fromtimestamp(after, self.zone())):
            at = moment.timestamp()
            if len(times) >= runs or (len(times) >= RUNS_AT_LEAST and at > after + horizon):
                break
            times.append(at)
        return times

    def interval(self, times: Sequence[float]) -> float:
        """The fallback interval other clients see: the shortest gap between `times`."""
        gaps = [b - a for a, b in itertools.pairwise(times)]
        return max(1.0, min(gaps, default=86400.0))


def cron_schedule(
    cron: str | None, tz: str, interval: float | None, offset: float
) -> CronSchedule | None:
    """The schedule `recur`'s options ask for; None for an interval."""
    if cron is None:
        if tz != "UTC":
            raise ConfigurationError("tz= applies to a cron schedule: give cron= too")
        return None
    if interval is not None or offset:
        raise ConfigurationError("give either cron= or interval= (and offset=), not both")
    return CronSchedule.of(cron, tz)


def refill_time(now: float, times: Sequence[float]) -> float:
    """When a schedule of `times` wants topping up: halfway to its last fire time."""
    return now + (times[-1] - now) / 2 if times else now


@dataclass(frozen=True)
class Planned:
    """A schedule's fire times from a moment, as the script stores them: the times, the
    fallback interval other clients see, and when the times want topping up."""

    schedule: CronSchedule
    times: list[float]
    interval: float
    refill: float

    @classmethod
    def of(cls, schedule: CronSchedule, now: float) -> Planned:
        times = schedule.fire_times(now)
        return cls(schedule, times, schedule.interval(times[:10]), refill_time(now, times))

    def options(self) -> list[str | float]:
        """The options of ``queue.upsertRecurring`` that give a template this schedule."""
        expression, tz = self.schedule.expression, self.schedule.tz
        times = json.dumps(self.times)
        return ["cron", expression, "tz", tz, "refill", self.refill, "times", times]


async def set_schedule(client: Client, rjid: str, schedule: CronSchedule) -> None:
    """Make recurring job `rjid` spawn on `schedule` from now on."""
    planned = Planned.of(schedule, client.clock())
    await client.protocol.call("recurringJob.update", rjid, "interval", planned.interval)
    await client.protocol.call(
        "recurringJob.setCron",
        rjid,
        schedule.expression,
        schedule.tz,
        planned.refill,
        *planned.times,
    )


async def next_runs(client: Client, rjid: str, count: int, tz: str = "UTC") -> list[datetime]:
    """The next `count` spawn times of a recurring job, in time zone `tz`."""
    times = await client.protocol.json("recurringJob.nextRuns", rjid, count)
    try:
        zone = ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):  # as another client may have written it
        zone = ZoneInfo("UTC")
    return [datetime.fromtimestamp(at, zone) for at in times]


async def refill_schedules(client: Client) -> int:
    """Tops up the cron schedules that run low (claiming each for a while, so workers share
    the work); returns how many it topped up."""
    claimed = await client.protocol.json("recurringJob.cronRefills", REFILL_LEASE)
    now = client.clock()
    for rjid, expression, tz, last in claimed:
        try:
            schedule = CronSchedule.of(expression, tz)
        except InvalidArgumentError as error:
            logger.warning("recurring job %s: %s", rjid, error.detail)
            continue
        times = schedule.fire_times(max(float(last), now))
        await client.protocol.call(
            "recurringJob.extendCron", rjid, expression, tz, refill_time(now, times), *times
        )
    return len(claimed)


async def keep_schedules(client: Client) -> None:
    """A worker's duty: ``refill_schedules`` every ``REFILL_EVERY`` seconds, until cancelled."""
    while True:
        await anyio.sleep(REFILL_EVERY)
        try:
            await refill_schedules(client)
        except AqlessError as error:
            logger.warning("could not top up the cron schedules: %s", error)
