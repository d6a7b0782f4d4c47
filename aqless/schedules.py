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
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import anyio
from cronsim import CronSim, CronSimError

from aqless import rules
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


def policy_options(checked: Mapping[str, Any]) -> list[str | float]:
    """The script's options for a template's policy inputs (checked) that were given."""
    options: list[str | float] = []
    for name in ("overlap", "catchup", "pause_after", "jitter"):
        if checked.get(name) is not None:
            options += [name, checked[name]]
    return options


#: The most runs one backfill makes (a larger range is refused before anything is sent),
#: and how many times one call of the script carries.
BACKFILL_MOST = 100_000
BACKFILL_CHUNK = 1000
#: The command a backfill's inputs are refused for.
BACKFILL = "recurringJob.backfill"


def unix_time(moment: datetime | float, tz: str = "UTC") -> float:
    """`moment` as a unix time: a naive datetime is read in time zone `tz`."""
    if not isinstance(moment, datetime):
        return moment
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=ZoneInfo(tz))
    return moment.timestamp()


def backfill_times(
    schedule: CronSchedule | None, interval: float, anchor: float, start: float, end: float
) -> list[float]:
    """The times in [`start`, `end`) a template fires at: on `schedule`, or every `interval`
    seconds in step with `anchor` (its next spawn time). ConfigurationError for more than
    ``BACKFILL_MOST``."""
    if schedule is not None:
        most = BACKFILL_MOST + 1
        fired = schedule.fire_times(start - 1, runs=most, horizon=end - start)
        times = [at for at in fired if start <= at < end]
    else:
        first = anchor + math.ceil((start - anchor) / interval) * interval
        count = max(0, math.ceil((end - first) / interval))
        if count > BACKFILL_MOST:
            times = [0.0] * (BACKFILL_MOST + 1)
        else:
            times = [first + k * interval for k in range(count)]
    if len(times) > BACKFILL_MOST:
        raise ConfigurationError(f"a backfill makes at most {BACKFILL_MOST} runs: shorten it")
    return times


async def backfill(
    client: Client,
    rjid: str,
    schedule: CronSchedule | None,
    interval: float,
    start: datetime | float,
    end: datetime | float,
) -> int:
    """Makes the runs of recurring job `rjid` due in [`start`, `end`) that no backfill made
    before; returns how many it made (see `RecurringJob.backfill`)."""
    tz = schedule.tz if schedule else "UTC"
    first = rules.check("backfill.start", unix_time(start, tz), BACKFILL)
    last = rules.check("backfill.end", unix_time(end, tz), BACKFILL)
    if last <= first:
        raise ConfigurationError("a backfill's end must come after its start")
    if last > client.clock():
        raise ConfigurationError("a backfill fills the past: its end must not be after now")
    anchor = first
    if schedule is None:
        upcoming = await client.protocol.json("recurringJob.nextRuns", rjid, 1)
        anchor = float(upcoming[0]) if upcoming else first
    times = backfill_times(schedule, interval, anchor, first, last)
    made = 0
    for at in range(0, len(times), BACKFILL_CHUNK):
        chunk = times[at : at + BACKFILL_CHUNK]
        made += int(await client.protocol.call(BACKFILL, rjid, *chunk))
    return made


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
