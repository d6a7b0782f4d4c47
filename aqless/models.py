"""The records the script's JSON replies decode into: typed, frozen, without I/O."""

from __future__ import annotations

import datetime
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Final, Literal, NamedTuple, TypeAlias, TypedDict

from aqless.errors import ConfigurationError, JobFailedError, ResultDroppedError


class JobState(StrEnum):
    """The `state` of a job (CORE 3.1, REQLESS 4.2); a `str`, so it compares with text.

    Examples:
        ```python
        job = await client.jobs.get(jid)
        if job is not None and job.state is aqless.JobState.FAILED:
            print(job.failure)
        ```
    """

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


#: The history entries that hand a job to a worker, each a new attempt: a pop (or a push),
#: and aqless's take-back of a job its worker held but never heard of (`worker.takeBack`).
HANDED_OUT: Final = ("popped", "taken-back")


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One entry of a job's history: what happened when, with the entry's own details
    (e.g. `queue` for `put`, `worker` for `popped`, your data for a `log` entry).

    Examples:
        ```python
        for entry in job.history:
            print(entry.when, entry.what, entry.details)
        ```
    """

    when: float
    what: str
    details: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, entry: Mapping[str, Any]) -> HistoryEntry:
        """Decode one history entry.

        Examples:
            ```python
            entry = aqless.HistoryEntry.from_json({"when": 1.0, "what": "put", "queue": "emails"})
            assert entry.details == {"queue": "emails"}
            ```
        """
        details = {k: v for k, v in entry.items() if k not in ("when", "what")}
        return cls(
            when=float(entry.get("when", 0)), what=str(entry.get("what", "")), details=details
        )


@dataclass(frozen=True, slots=True)
class Failure:
    """Why a job last failed: its group, the message, when, and the worker it failed on.

    Examples:
        ```python
        if job.failure is not None:
            print(job.failure.group, job.failure.message.splitlines()[-1])
        ```
    """

    group: str
    message: str
    when: float
    worker: str

    @classmethod
    def from_json(cls, value: Any) -> Failure | None:
        """Decode a job's failure (None when it has none).

        Examples:
            ```python
            failure = aqless.Failure.from_json({"group": "smtp-down", "message": "refused"})
            assert failure is not None and failure.group == "smtp-down"
            assert aqless.Failure.from_json({}) is None
            ```
        """
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
    """How many jobs a queue holds in each state, and whether it is paused
    (``queue.counts()``).

    Examples:
        ```python
        counts = await client.queues["emails"].counts()
        print(counts.waiting, counts.running, counts.stalled, counts.paused)
        ```
    """

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
        """Decode one queue's counts.

        Examples:
            ```python
            counts = aqless.QueueCounts.from_json({"name": "emails", "waiting": 2})
            assert (counts.name, counts.waiting) == ("emails", 2)
            ```
        """
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
class GroupCounts:
    """One fairness group of a queue (``Queue.groups``): its jobs waiting and running, and
    its settings.

    Attributes:
        name: the group's name; None for the jobs put without one (the default group).
        waiting: its jobs waiting to be popped.
        running: its jobs running (their locks held, stalled ones included).
        weight: its share of the pops' turns against the other groups (1 by default).
        concurrency: the most of its jobs aqless's pops let run at once (0: no cap).
        rate_limit: the most of its jobs aqless's pops start in any `rate_period` seconds
            (0: no rate limit).
        rate_period: the rate limit's window in seconds (0 without one).
        rate_used: its starts in the window ending now (0 without a rate limit).

    Examples:
        ```python
        queue = client.queues["exports"]
        await queue.put("app.jobs.export", {}, group="tenant-a")
        await queue.set_group_weight("tenant-a", 2)
        for group in await queue.groups():
            print(group.name, group.waiting, group.running, group.weight)
        ```
    """

    name: str | None
    waiting: int
    running: int
    weight: float
    concurrency: int
    rate_limit: int = 0
    rate_period: float = 0.0
    rate_used: int = 0

    @classmethod
    def merged(cls, parts: Sequence[GroupCounts]) -> GroupCounts:
        """One group over several servers (a sharded queue's partitions): its jobs and its
        window's starts summed, each setting the largest a server holds.

        Examples:
            ```python
            whole = aqless.GroupCounts.merged([on_shard_1, on_shard_2])
            ```
        """
        return cls(
            parts[0].name,
            waiting=sum(part.waiting for part in parts),
            running=sum(part.running for part in parts),
            weight=max(part.weight for part in parts),
            concurrency=max(part.concurrency for part in parts),
            rate_limit=max(part.rate_limit for part in parts),
            rate_period=max(part.rate_period for part in parts),
            rate_used=sum(part.rate_used for part in parts),
        )

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> GroupCounts:
        """Decode one group's counts (the script names the default group '').

        Examples:
            ```python
            counts = aqless.GroupCounts.from_json({"group": "", "waiting": 3})
            assert counts.name is None and counts.waiting == 3
            ```
        """
        name = str(value["group"])
        return cls(
            name=name or None,
            waiting=int(value.get("waiting", 0)),
            running=int(value.get("running", 0)),
            weight=float(value.get("weight", 1)),
            concurrency=int(value.get("concurrency", 0)),
            rate_limit=int(value.get("rate", 0)),
            rate_period=float(value.get("per", 0)),
            rate_used=int(value.get("used", 0)),
        )


@dataclass(frozen=True, slots=True)
class Durations:
    """A day's wait or run times: count, mean, standard deviation (seconds) and the
    histogram (148 buckets: seconds 0-59, minutes 1-59, hours 1-23, days 1-6).

    Examples:
        ```python
        stats = await client.queues["emails"].stats()
        print(f"{stats.wait.count} popped today, mean wait {stats.wait.mean:.1f} s")
        ```
    """

    count: int
    mean: float
    std: float
    histogram: Sequence[int]

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> Durations:
        """Decode the script's JSON for one histogram.

        Examples:
            ```python
            times = aqless.Durations.from_json({"count": 2, "mean": 1.5, "histogram": [0, 1, 1]})
            assert times.count == 2
            ```
        """
        return cls(
            count=int(value.get("count", 0)),
            mean=float(value.get("mean", 0)),
            std=float(value.get("std", 0)),
            histogram=tuple(int(n) for n in _listed_numbers(value.get("histogram"))),
        )

    @classmethod
    def merged(cls, parts: Sequence[Durations]) -> Durations:
        """The times of several servers (a sharded queue's partitions) as if measured at
        once: counts and histograms summed; mean and (sample) standard deviation by Chan et
        al.'s parallel Welford (M2 = the sum of each part's M2 plus its count times its
        mean's squared distance from the overall mean).

        Examples:
            ```python
            a = aqless.Durations(count=1, mean=1.0, std=0.0, histogram=(0, 1))
            b = aqless.Durations(count=1, mean=3.0, std=0.0, histogram=(0, 0, 0, 1))
            both = aqless.Durations.merged([a, b])
            assert (both.count, both.mean) == (2, 2.0)
            ```
        """
        count = sum(part.count for part in parts)
        width = max((len(part.histogram) for part in parts), default=0)
        histogram = tuple(
            sum(part.histogram[i] for part in parts if i < len(part.histogram))
            for i in range(width)
        )
        if count == 0:
            return cls(count=0, mean=0.0, std=0.0, histogram=histogram)
        mean = sum(part.count * part.mean for part in parts) / count
        m2 = sum(
            part.std**2 * (part.count - 1) + part.count * (part.mean - mean) ** 2
            for part in parts
            if part.count
        )
        std = math.sqrt(m2 / (count - 1)) if count > 1 else 0.0
        return cls(count=count, mean=mean, std=std, histogram=histogram)


def _listed_numbers(value: Any) -> list[float]:
    return [float(n) for n in value] if isinstance(value, list) else []


@dataclass(frozen=True, slots=True)
class QueueStats:
    """A queue's statistics for one day (``queue.stats(date)``, default today, UTC): its
    wait and run times, and its failures and retries.

    Examples:
        ```python
        stats = await client.queues["emails"].stats()
        print(stats.run.mean, stats.failed, stats.retries)
        ```
    """

    wait: Durations
    run: Durations
    failed: int
    failures: int
    retries: int

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> QueueStats:
        """Decode a queue's statistics for one day.

        Examples:
            ```python
            stats = aqless.QueueStats.from_json({"failed": 1, "wait": {"count": 3}})
            assert (stats.failed, stats.wait.count) == (1, 3)
            ```
        """
        return cls(
            wait=Durations.from_json(value.get("wait", {})),
            run=Durations.from_json(value.get("run", {})),
            failed=int(value.get("failed", 0)),
            failures=int(value.get("failures", 0)),
            retries=int(value.get("retries", 0)),
        )


@dataclass(frozen=True, slots=True)
class ThrottleInfo:
    """A throttle: its id, its maximum (0: unlimited) and its TTL (-1: none, -2: unset).

    Examples:
        ```python
        info = await client.throttles["smtp"].get()
        print(info.maximum, info.ttl)
        ```
    """

    id: str
    maximum: int
    ttl: int

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> ThrottleInfo:
        """Decode a throttle's settings.

        Examples:
            ```python
            info = aqless.ThrottleInfo.from_json({"id": "smtp", "maximum": 5})
            assert (info.maximum, info.ttl) == (5, -2)
            ```
        """
        return cls(
            id=str(value["id"]), maximum=int(value.get("maximum", 0)), ttl=int(value.get("ttl", -2))
        )


@dataclass(frozen=True, slots=True)
class WorkerCounts:
    """A worker seen by the server: how many jobs it holds, how many of them stalled.

    Examples:
        ```python
        for worker in await client.workers.counts():
            print(worker.name, worker.jobs, worker.stalled)
        ```
    """

    name: str
    jobs: int
    stalled: int


@dataclass(frozen=True, slots=True)
class WorkerJobs:
    """The jids a worker holds: those whose lock is current, and the stalled ones.

    Examples:
        ```python
        held = await client.workers.jobs("host-1-4242")
        print(len(held.jobs), len(held.stalled))
        ```
    """

    jobs: Sequence[str]
    stalled: Sequence[str]


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """What an aqless worker says of itself (`started` and `seen` are epoch seconds;
    `per_minute` is the jobs it completed per minute over the last minute).

    Examples:
        ```python
        for name, info in (await client.workers.records()).items():
            print(name, info.host, info.pid, info.per_minute)
        ```
    """

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
    #: running, paused (``pause()``, SIGUSR2), quiet (asked by an operator: takes no more
    #: jobs), stopping; a record written before aqless kept it reads running
    mode: str = "running"

    def fields(self) -> dict[str, str]:
        """The record as the worker stores it: each field as text (`parse` reads it back).

        Examples:
            ```python
            raw = info.fields()
            assert aqless.WorkerInfo.parse(info.name, raw).host == info.host
            ```
        """
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
            "mode": self.mode,
        }

    @classmethod
    def parse(cls, name: str, raw: dict[str, str]) -> WorkerInfo | None:
        """The record read back, or None for one that is gone or unreadable.

        Examples:
            ```python
            assert aqless.WorkerInfo.parse("gone", {}) is None  # no "seen": unreadable
            ```
        """
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
                mode=raw.get("mode", "running"),
            )
        except (KeyError, ValueError):
            return None

    @classmethod
    def merged(cls, parts: Sequence[WorkerInfo]) -> WorkerInfo:
        """One sharded worker's records on several shards: the newest one, with the counts
        summed and the earliest start.

        Examples:
            ```python
            records = await client.workers.records()
            one = aqless.WorkerInfo.merged([records["host-1-a"], records["host-1-b"]])
            ```
        """
        newest = max(parts, key=lambda part: part.seen)
        return replace(
            newest,
            started=min(part.started for part in parts),
            completed=sum(part.completed for part in parts),
            failed=sum(part.failed for part in parts),
            per_minute=sum(part.per_minute for part in parts),
        )


@dataclass(frozen=True, slots=True)
class SeenWorker:
    """A worker: what qless counts of it (the jobs it holds) and its record, if any.

    Examples:
        ```python
        for worker in (await client.workers.seen()).workers:
            print(worker.counts.name, worker.counts.jobs, worker.info)
        ```
    """

    counts: WorkerCounts
    info: WorkerInfo | None


class SeenWorkers(NamedTuple):
    """The workers that hold jobs or publish a record, by name; and the names of the other
    clients qless lists (they popped, hold nothing and publish no record: another client's
    idle worker, or a client that never ran a job).

    Examples:
        ```python
        seen = await client.workers.seen()
        print(len(seen.workers), "workers;", len(seen.others), "other clients")
        ```
    """

    workers: list[SeenWorker]
    others: list[str]

    @classmethod
    def of(cls, counts: Sequence[WorkerCounts], records: Mapping[str, WorkerInfo]) -> SeenWorkers:
        """The workers qless counts and those whose records were read, together.

        Examples:
            ```python
            counts, records = await client.workers.counts(), await client.workers.records()
            seen = aqless.SeenWorkers.of(counts, records)
            ```
        """
        held_by = {held.name: held for held in counts}
        seen = cls([], [])
        for name in sorted(held_by.keys() | records.keys()):
            held = held_by.get(name) or WorkerCounts(name=name, jobs=0, stalled=0)
            info = records.get(name)
            if info is None and not held.jobs and not held.stalled:
                seen.others.append(name)
            else:
                seen.workers.append(SeenWorker(held, info))
        return seen


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a listing, and the total it is part of.

    Examples:
        ```python
        page = await client.jobs.tagged("vip", count=50)
        print(f"{len(page.jids)} of {page.total}")
        ```
    """

    total: int
    jids: Sequence[str]


#: What a recurring job's due run does while its last run is still live (``overlap=``).
Overlap: TypeAlias = Literal["skip", "buffer_one", "buffer_all", "cancel_other", "allow_all"]
#: A moment: an aware (or UTC) datetime, or a unix time.
When: TypeAlias = datetime.datetime | float


class RecurringChanges(TypedDict, total=False):
    """What `RecurringJob.update` may change (each left as it is when not given).

    Examples:
        ```python
        await recurring.update(interval=600, retries=3)
        ```
    """

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
    overlap: Overlap | None
    catchup: float | None
    pause_after: int | None
    jitter: float | None


#: The script's names of a rate limit's two modes (`RateLimit.set`'s `smooth`).
BURST: Final = "burst"
SMOOTH: Final = "smooth"


@dataclass(frozen=True, slots=True)
class RateLimitInfo:
    """A rate limit: at most `limit` starts per `period` seconds (0, 0: no limit), the
    starts in the current window, and the seconds until the next free start; `smooth`:
    its starts are spread evenly rather than started in bursts.

    Examples:
        ```python
        info = await client.rate_limits["partner-api"].get()
        print(f"{info.used}/{info.limit} per {info.period:g} s, next in {info.wait:.1f} s")
        ```
    """

    id: str
    limit: int
    period: float
    used: int
    wait: float
    smooth: bool = False

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> RateLimitInfo:
        """Decode the script's rate-limit object.

        Examples:
            ```python
            info = aqless.RateLimitInfo.from_json(
                {"id": "api", "limit": 10, "period": 60, "used": 2, "wait": 0, "mode": "smooth"}
            )
            assert info.smooth and info.limit == 10
            ```
        """
        return cls(
            id=str(value["id"]),
            limit=int(value["limit"]),
            period=float(value["period"]),
            used=int(value["used"]),
            wait=float(value["wait"]),
            smooth=value.get("mode") == SMOOTH,
        )


#: How `PriorityPattern.parse` marks a group whose queues are shuffled.
FAIRLY: Final = "fairly:"


@dataclass(frozen=True, slots=True)
class PriorityPattern:
    """One group of the stored priority order: queues matching `patterns`, shuffled when
    `fairly`. The group whose patterns are exactly ``["default"]`` stands for every queue no
    other group matches.

    Examples:
        ```python
        for group in await client.queue_patterns.priorities():
            print(group.patterns, group.fairly)
        ```
    """

    patterns: tuple[str, ...]
    fairly: bool = False

    @property
    def is_default(self) -> bool:
        return self.patterns == ("default",)

    @classmethod
    def parse(cls, text: str) -> PriorityPattern:
        """A group written as comma-separated globs, shuffled with a ``fairly:`` prefix:
        ``"urgent-*,alerts"`` or ``"fairly:mail-*"`` (the CLI's and the dashboard's form).

        Raises:
            ConfigurationError: the text names no pattern.

        Examples:
            ```python
            group = aqless.PriorityPattern.parse("fairly:mail-*")
            assert group.fairly and group.patterns == ("mail-*",)
            ```
        """
        text = text.strip()
        fairly = text.startswith(FAIRLY)
        body = text.removeprefix(FAIRLY) if fairly else text
        patterns = tuple(part.strip() for part in body.split(",") if part.strip())
        if not patterns:
            raise ConfigurationError(f"a priority group needs at least one pattern: {text!r}")
        return cls(patterns, fairly=fairly)

    def __str__(self) -> str:
        return (FAIRLY if self.fairly else "") + ",".join(self.patterns)


@dataclass(frozen=True, slots=True)
class JobResult:
    """What the server holds of a job's outcome now (``client.jobs.stored_result(jid)``).

    Attributes:
        jid: the job.
        state: its state, as text (a result is only kept once it is complete).
        text: the kept return value as JSON text; None when none is kept.
        dropped: why the return value was not kept, or None.
        failure: why the job failed, when it did.

    Examples:
        ```python
        stored = await client.jobs.stored_result(jid)
        if stored is not None and stored.finished:
            print(stored.outcome())
        ```
    """

    jid: str
    state: str
    text: str | None
    dropped: str | None
    failure: Failure | None

    @property
    def value(self) -> Any:
        """The kept return value, decoded (None when none is kept)."""
        return None if self.text is None else json.loads(self.text)

    @property
    def finished(self) -> bool:
        """Whether the job is complete or failed."""
        return self.state in (JobState.COMPLETE, JobState.FAILED)

    def outcome(self) -> Any:
        """The return value of a complete job (None while it is not finished).

        Raises:
            JobFailedError: the job failed.
            ResultDroppedError: it completed without its value kept.

        Examples:
            ```python
            value = (await client.jobs.stored_result(jid)).outcome()
            ```
        """
        if self.state == JobState.FAILED:
            failure = self.failure
            group, message = (failure.group, failure.message) if failure else ("", "")
            raise JobFailedError(self.jid, group, message)
        if self.dropped is not None:
            raise ResultDroppedError(self.jid, self.dropped)
        return self.value

    @classmethod
    def from_json(cls, jid: str, reply: Mapping[str, Any]) -> JobResult:
        """Decode the script's reply for job `jid`'s kept result (`Jobs.stored_result` does it).

        Examples:
            ```python
            kept = aqless.JobResult.from_json("j-1", {"state": "complete", "result": "42"})
            assert kept.value == 42
            ```
        """
        text, dropped = reply.get("result"), reply.get("dropped")
        return cls(
            jid=jid,
            state=str(reply.get("state", "")),
            text=text if isinstance(text, str) else None,
            dropped=dropped if isinstance(dropped, str) else None,
            failure=Failure.from_json(reply.get("failure")),
        )
