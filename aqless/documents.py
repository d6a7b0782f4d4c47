"""The client's records as JSON documents: what ``aqless --json`` prints and the dashboard's
``/api`` answers, one document per record.

A job and a recurring job carry the field names of the qless job object (the script's
``job.get`` and ``recurringJob.get``: ``expires``, ``remaining``, ``spawned_from_jid``...),
history entries are flat (``when``, ``what`` and the entry's own fields) as the script
stores them. The other records carry their dataclass's field names.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from aqless.job import Job, RecurringJob
from aqless.models import (
    Failure,
    GroupCounts,
    HistoryEntry,
    JobResult,
    PriorityPattern,
    QueueCounts,
    QueueStats,
    RateLimitInfo,
    SeenWorker,
    ThrottleInfo,
    WorkerCounts,
    WorkerInfo,
)
from aqless.progress import Progress
from aqless.sharding.reads import ShardReport

if TYPE_CHECKING:
    from aqless.contracts import ScriptClient as Client

Document = dict[str, Any]

__all__ = [
    "Document",
    "counts_document",
    "failure_document",
    "history_document",
    "job_document",
    "json_preview",
    "priority_document",
    "progress_document",
    "recurring_document",
    "result_document",
    "seen_worker_document",
    "shard_document",
    "stats_document",
    "throttle_document",
    "worker_document",
    "worker_info_document",
]


def failure_document(failure: Failure | None) -> Document | None:
    return None if failure is None else dataclasses.asdict(failure)


def history_document(entry: HistoryEntry) -> Document:
    return {"when": entry.when, "what": entry.what, **entry.details}


def job_document(job: Job) -> Document:
    """A job as the script's `job.get` names its fields (its data decoded)."""
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


async def job_details(client: Client, job: Job) -> Document:
    """A job's document with what aqless keeps beside the job object: its last progress
    report, its checkpoint, its result and its dedup id (for `aqless get` and the
    dashboard's job page)."""
    document = job_document(job)
    document["progress"] = progress_document((await client.jobs.progress(job.jid)).get(job.jid))
    document["checkpoint"] = checkpoint_document(await client.jobs.checkpoints(job.jid), job.jid)
    document["result"] = result_document(await client.jobs.stored_result(job.jid))
    dedup = await dedup_id(client, job.jid)
    if dedup is not None:
        document["dedup"] = dedup
    return document


def checkpoint_document(states: Mapping[str, Any], jid: str) -> Document | None:
    """The last checkpoint the job's code stored (``state``, decoded; see
    `Job.checkpoint`), or None when it holds none; `states` is `Jobs.checkpoints`' reply."""
    return {"state": states[jid]} if jid in states else None


def result_document(stored: JobResult | None) -> Document | None:
    """A job's kept return value (`value`, decoded), or why it was not kept (`dropped`);
    None when it has neither (not complete, or its code returned None)."""
    if stored is None or (stored.text is None and stored.dropped is None):
        return None
    return {"value": stored.value, "dropped": stored.dropped}


#: How much of a JSON value the CLI and the dashboard show.
PREVIEW_CHARS = 20_000


def json_preview(value: Any, limit: int = PREVIEW_CHARS) -> str:
    """`value` as indented JSON for people, cut after `limit` characters (saying so)."""
    text = json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n… ({len(text) - limit} more characters)"


def progress_document(progress: Progress | None) -> Document | None:
    """A job's last progress report (``fraction``, ``message``, ``at``), or None."""
    return None if progress is None else dataclasses.asdict(progress)


def recurring_document(job: RecurringJob) -> Document:
    """A recurring job as the script's `recurringJob.get` names its fields (its policy's
    too, each with its default when the script leaves it out)."""
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
        "overlap": job.overlap,
        "catchup": job.catchup,
        "pause_after": job.pause_after,
        "jitter": job.jitter,
        "paused": job.paused,
        "failures": job.failures,
        "buffered": job.buffered,
    } | ({"cron": job.cron, "tz": job.tz} if job.cron else {})


def counts_document(counts: QueueCounts) -> Document:
    """A queue's name, its job count in each state, and `paused`."""
    return dataclasses.asdict(counts)


def group_document(group: GroupCounts) -> Document:
    """A queue's fairness group: `name` (null for the jobs put without one), `waiting`,
    `running`, `weight`, `concurrency` (0: no cap), `rate_limit` (starts per
    `rate_period` seconds, 0: none) and `rate_used` (its starts in the current window)."""
    return dataclasses.asdict(group)


def stats_document(stats: QueueStats) -> Document:
    """A queue's day: `wait` and `run` (count, mean, std, histogram), failed, failures,
    retries."""
    document = dataclasses.asdict(stats)
    for kind in ("wait", "run"):
        document[kind]["histogram"] = list(document[kind]["histogram"])
    return document


def throttle_document(info: ThrottleInfo, *, locks: list[str], pending: list[str]) -> Document:
    """A throttle's id, maximum and ttl, the jids holding it (`locks`) and those waiting
    for it (`pending`)."""
    return {**dataclasses.asdict(info), "locks": locks, "pending": pending}


def rate_limit_document(info: RateLimitInfo) -> Document:
    """A rate limit's id, limit and period, the starts in its window (`used`) and the
    seconds until its next free start (`wait`)."""
    return dataclasses.asdict(info)


def worker_document(worker: WorkerCounts) -> Document:
    """A worker's name, how many jobs it holds and how many of them stalled."""
    return dataclasses.asdict(worker)


def worker_info_document(info: WorkerInfo) -> Document:
    """What an aqless worker publishes of itself: `host`, `pid`, `queues`, `concurrency`,
    `version`, `started` and `seen` (epoch seconds), `completed`, `failed`, `per_minute`."""
    document = dataclasses.asdict(info)
    document["queues"] = list(info.queues)
    del document["name"]
    return document


def seen_worker_document(seen: SeenWorker) -> Document:
    """A worker's `worker_document`, and its own record under `info` (null for a worker of
    another qless client, which publishes none)."""
    document = worker_document(seen.counts)
    document["info"] = None if seen.info is None else worker_info_document(seen.info)
    return document


def shard_document(report: ShardReport) -> Document:
    """A shard's id, namespace, state, primary (`node`), `lag` (seconds), `used_memory`,
    its queues' counts, and those counts summed (`waiting`, `running`...)."""
    document = dataclasses.asdict(report)
    document["queues"] = [counts_document(counts) for counts in report.queues]
    for state in ("waiting", "running", "scheduled", "depends", "stalled"):
        document[state] = getattr(report, state)
    return document


def priority_document(group: PriorityPattern) -> Document:
    """A priority group: its queue patterns, and whether its queues are served fairly."""
    return {"patterns": list(group.patterns), "fairly": group.fairly}


async def dedup_id(client: Client, jid: str) -> str | None:
    """The dedup id a job was put with, if any (it is not part of the job object)."""
    value = await client.protocol.call("job.dedup", jid)
    return value if isinstance(value, str) else None
