"""The records the script's JSON replies decode into: typed, frozen, without I/O."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypedDict


class JobState(StrEnum):
    """The `state` of a job (CORE 3.1, REQLESS 4.2)."""

    WAITING = "waiting"
    SCHEDULED = "scheduled"
    DEPENDS = "depends"
    THROTTLED = "throttled"
    RUNNING = "running"
    STALLED = "stalled"
    COMPLETE = "complete"
    FAILED = "failed"


def listed(value: Any) -> list[str]:
    """A list the script encodes as JSON (`{}` when empty, as cjson writes it)."""
    if isinstance(value, list):
        return [str(item) for item in value]
    return []


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One entry of a job's history: what happened when, with the entry's own details
    (e.g. `queue` for `put`, `worker` for `popped`, your data for a `log` entry)."""

    when: float
    what: str
    details: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, entry: Mapping[str, Any]) -> HistoryEntry:
        """Decode one history entry."""
        details = {k: v for k, v in entry.items() if k not in ("when", "what")}
        return cls(
            when=float(entry.get("when", 0)), what=str(entry.get("what", "")), details=details
        )


@dataclass(frozen=True, slots=True)
class Failure:
    """Why a job last failed: its group, the message, when, and the worker it failed on."""

    group: str
    message: str
    when: float
    worker: str

    @classmethod
    def from_json(cls, value: Any) -> Failure | None:
        """Decode a job's failure (None when it has none)."""
        if not isinstance(value, Mapping) or "group" not in value:
            return None
        return cls(
            group=str(value["group"]),
            message=str(value.get("message", "")),
            when=float(value.get("when", 0)),
            worker=str(value.get("worker", "")),
        )


@dataclass(frozen=True, slots=True)
class QueueCounts:
    """How many jobs a queue holds in each state, and whether it is paused."""

    name: str
    waiting: int
    running: int
    stalled: int
    scheduled: int
    depends: int
    throttled: int
    recurring: int
    paused: bool

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> QueueCounts:
        """Decode one queue's counts."""
        return cls(
            name=str(value["name"]),
            waiting=int(value.get("waiting", 0)),
            running=int(value.get("running", 0)),
            stalled=int(value.get("stalled", 0)),
            scheduled=int(value.get("scheduled", 0)),
            depends=int(value.get("depends", 0)),
            throttled=int(value.get("throttled", 0)),
            recurring=int(value.get("recurring", 0)),
            paused=bool(value.get("paused", False)),
        )


@dataclass(frozen=True, slots=True)
class Durations:
    """A day's wait or run times: count, mean, standard deviation (seconds) and the
    histogram (148 buckets: seconds 0-59, minutes 1-59, hours 1-23, days 1-6)."""

    count: int
    mean: float
    std: float
    histogram: Sequence[int]

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> Durations:
        """Decode the script's JSON for one histogram."""
        return cls(
            count=int(value.get("count", 0)),
            mean=float(value.get("mean", 0)),
            std=float(value.get("std", 0)),
            histogram=tuple(int(n) for n in _listed_numbers(value.get("histogram"))),
        )


def _listed_numbers(value: Any) -> list[float]:
    return [float(n) for n in value] if isinstance(value, list) else []


@dataclass(frozen=True, slots=True)
class QueueStats:
    """A queue's statistics for one day."""

    wait: Durations
    run: Durations
    failed: int
    failures: int
    retries: int

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> QueueStats:
        """Decode a queue's statistics for one day."""
        return cls(
            wait=Durations.from_json(value.get("wait", {})),
            run=Durations.from_json(value.get("run", {})),
            failed=int(value.get("failed", 0)),
            failures=int(value.get("failures", 0)),
            retries=int(value.get("retries", 0)),
        )


@dataclass(frozen=True, slots=True)
class ThrottleInfo:
    """A throttle: its id, its maximum (0: unlimited) and its TTL (-1: none, -2: unset)."""

    id: str
    maximum: int
    ttl: int

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> ThrottleInfo:
        """Decode a throttle's settings."""
        return cls(
            id=str(value["id"]), maximum=int(value.get("maximum", 0)), ttl=int(value.get("ttl", -2))
        )


@dataclass(frozen=True, slots=True)
class WorkerCounts:
    """A worker seen by the server: how many jobs it holds, how many of them stalled."""

    name: str
    jobs: int
    stalled: int


@dataclass(frozen=True, slots=True)
class WorkerJobs:
    """The jids a worker holds: those whose lock is current, and the stalled ones."""

    jobs: Sequence[str]
    stalled: Sequence[str]


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a listing, and the total it is part of."""

    total: int
    jids: Sequence[str]


class RecurringChanges(TypedDict, total=False):
    """What `RecurringJob.update` may change (each left as it is when not given)."""

    interval: float | None
    priority: float | None
    retries: int | None
    data: Any
    klass: str | None
    queue: str | None
    backlog: int | None
    throttles: Sequence[str] | None
    cron: str | None
    tz: str | None
