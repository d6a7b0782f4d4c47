"""The client's records as plain JSON values: what `/api` answers and templates read."""

from __future__ import annotations

import dataclasses
from typing import Any

from aqless.job import Job, RecurringJob
from aqless.models import QueueCounts, QueueStats, ThrottleInfo

JSON = dict[str, Any]


def job_json(job: Job) -> JSON:
    failure = job.failure
    return {
        "jid": job.jid,
        "klass": job.klass_name,
        "queue": job.queue_name,
        "state": str(job.state),
        "priority": job.priority,
        "tags": list(job.tags),
        "worker": job.worker_name,
        "expires_at": job.expires_at,
        "data": job.data,
        "history": [
            {"when": entry.when, "what": entry.what, "details": dict(entry.details)}
            for entry in job.history
        ],
        "dependencies": list(job.dependencies),
        "dependents": list(job.dependents),
        "retries": job.original_retries,
        "retries_left": job.retries_left,
        "failure": None if failure is None else dataclasses.asdict(failure),
        "tracked": job.tracked,
        "throttles": list(job.throttles),
        "spawned_from": job.spawned_from_jid,
    }


def recurring_json(job: RecurringJob) -> JSON:
    return {
        "jid": job.jid,
        "klass": job.klass_name,
        "queue": job.queue_name,
        "state": "recurring",
        "data": job.data,
        "priority": job.priority,
        "interval": job.interval,
        "retries": job.retries,
        "count": job.count,
        "backlog": job.backlog,
        "tags": list(job.tags),
        "throttles": list(job.throttles),
    }


def counts_json(counts: QueueCounts) -> JSON:
    return dataclasses.asdict(counts)


def stats_json(stats: QueueStats) -> JSON:
    value = dataclasses.asdict(stats)
    for kind in ("wait", "run"):
        value[kind]["histogram"] = list(value[kind]["histogram"])
    return value


def throttle_json(info: ThrottleInfo, *, locks: list[str], pending: list[str]) -> JSON:
    return {**dataclasses.asdict(info), "locks": locks, "pending": pending}
