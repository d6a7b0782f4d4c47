"""The JSON documents `--json` prints: the client's records with the protocol's field names."""

from __future__ import annotations

import dataclasses
from typing import Any

from aqless.job import Job, RecurringJob
from aqless.models import Failure, HistoryEntry


def failure_document(failure: Failure | None) -> dict[str, Any] | None:
    return None if failure is None else dataclasses.asdict(failure)


def history_document(entry: HistoryEntry) -> dict[str, Any]:
    return {"when": entry.when, "what": entry.what, **entry.details}


def job_document(job: Job) -> dict[str, Any]:
    """A job as the script's `job.get` names its fields."""
    return {
        "jid": job.jid,
        "klass": job.klass_name,
        "queue": job.queue_name,
        "state": str(job.state),
        "priority": job.priority,
        "data": job.data,
        "tags": list(job.tags),
        "worker": job.worker_name,
        "expires": job.expires_at,
        "retries": job.original_retries,
        "remaining": job.retries_left,
        "dependencies": list(job.dependencies),
        "dependents": list(job.dependents),
        "tracked": job.tracked,
        "throttles": list(job.throttles),
        "spawned_from_jid": job.spawned_from_jid,
        "failure": failure_document(job.failure),
        "history": [history_document(entry) for entry in job.history],
    }


def recurring_document(job: RecurringJob) -> dict[str, Any]:
    """A recurring job as the script's `recurringJob.get` names its fields."""
    return {
        "jid": job.jid,
        "klass": job.klass_name,
        "queue": job.queue_name,
        "state": "recur",
        "priority": job.priority,
        "data": job.data,
        "tags": list(job.tags),
        "interval": job.interval,
        "retries": job.retries,
        "count": job.count,
        "backlog": job.backlog,
        "throttles": list(job.throttles),
    }


def record_document(record: Any) -> dict[str, Any]:
    """A frozen dataclass of aqless.models (QueueCounts, QueueStats...) as JSON."""
    document: dict[str, Any] = dataclasses.asdict(record)
    return document
