"""The terminal view of one job: its fields, its data, its history as a timeline, its
failure; and a table of several jobs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from rich.console import Group, RenderableType
from rich.json import JSON
from rich.panel import Panel
from rich.text import Text

from aqless.cli.progress_view import progress_view
from aqless.cli.render import TableView, ago, duration, fields, joined, moment, number, short, table
from aqless.cli.runtime import to_json
from aqless.cli.workflow_view import parked_text, steps_view
from aqless.documents import json_preview
from aqless.job import Job, RecurringJob
from aqless.models import Failure, HistoryEntry
from aqless.ops.known import limit_label
from aqless.progress import Progress

STATE_STYLES = {
    "waiting": "cyan",
    "scheduled": "blue",
    "depends": "magenta",
    "throttled": "magenta",
    "running": "green",
    "stalled": "yellow",
    "complete": "bright_black",
    "failed": "bold red",
}


def state_text(state: str) -> Text:
    return Text(state, style=STATE_STYLES.get(state, ""))


def data_panel(data: Any) -> Panel:
    return Panel(JSON(to_json(data)), title="data", title_align="left", expand=False)


def _details(details: Mapping[str, Any]) -> str:
    return " ".join(f"{name}={short(value, 40)}" for name, value in details.items())


def history_view(history: Sequence[HistoryEntry]) -> TableView:
    """The history as a timeline: when, time since the first entry, what, details."""
    start = history[0].when if history else 0.0
    rows = (
        (
            moment(entry.when),
            f"+{duration(entry.when - start)}",
            entry.what,
            _details(entry.details),
        )
        for entry in history
    )
    return table("history", ("when", "since put#", "what", "details"), rows)


def failure_view(failure: Failure) -> Panel:
    heading = Text(f"{moment(failure.when)} ({ago(failure.when)}) on {failure.worker or '-'}")
    return Panel(
        Group(heading, Text(failure.message)),
        title=f"failed: {failure.group}",
        title_align="left",
        border_style="red",
    )


def checkpoint_view(checkpoint: Mapping[str, Any]) -> Panel:
    """The last state the job's code stored to resume from (`Job.checkpoint`)."""
    return Panel(Text(json_preview(checkpoint["state"])), title="checkpoint", title_align="left")


def result_view(result: Mapping[str, Any]) -> Panel:
    """A job's kept return value, or why it was not kept."""
    if result["dropped"] is not None:
        return Panel(Text(result["dropped"]), title="result not kept", title_align="left")
    return Panel(Text(json_preview(result["value"])), title="result", title_align="left")


def job_view(job: Job, details: Mapping[str, Any] | None = None) -> RenderableType:
    """A job; ``details`` is its `aqless.documents.job_details` (what aqless keeps beside it)."""
    details = details or {}
    dedup = details.get("dedup")
    lock = f"{moment(job.expires_at)} ({ago(job.expires_at)})" if job.expires_at else "-"
    summary = fields(
        [
            ("jid", job.jid),
            ("class", job.klass_name),
            ("queue", job.queue_name or "-"),
            ("state", state_text(str(job.state))),
            ("priority", number(job.priority)),
            ("tags", joined(job.tags)),
            ("worker", job.worker_name or "-"),
            ("lock expires", lock),
            ("retries left", f"{job.retries_left} of {job.original_retries}"),
            ("depends on", joined(job.dependencies)),
            ("dependents", joined(job.dependents)),
            ("throttles", joined(limit_label(t) for t in job.throttles)),
            ("tracked", "yes" if job.tracked else "no"),
            ("spawned from", job.spawned_from_jid or "-"),
            *([("dedup id", dedup)] if dedup is not None else []),
            *([("parked", why)] if (why := parked_text(job)) is not None else []),
        ]
    )
    parts: list[RenderableType] = [summary]
    if (workflow := steps_view(job)) is not None:
        parts.append(workflow)
    if details.get("progress") is not None:
        parts.append(progress_view(Progress(**details["progress"])))
    if details.get("checkpoint") is not None:
        parts.append(checkpoint_view(details["checkpoint"]))
    parts.append(data_panel(job.data))
    if details.get("result") is not None:
        parts.append(result_view(details["result"]))
    parts.append(history_view(job.history))
    if job.failure is not None:
        parts.append(failure_view(job.failure))
    return Group(*parts)


def recurring_when(job: RecurringJob) -> Text:
    """When a recurring job spawns: its cron expression and zone, or its interval."""
    return Text(f"{job.cron} ({job.tz})" if job.cron else f"every {duration(job.interval)}")


def recurring_view(job: RecurringJob, next_runs: Sequence[datetime] = ()) -> RenderableType:
    summary = fields(
        [
            ("jid", job.jid),
            ("recurring", recurring_when(job)),
            ("next runs", Text(", ".join(run.isoformat(" ") for run in next_runs) or "-")),
            ("class", job.klass_name),
            ("queue", job.queue_name),
            ("priority", number(job.priority)),
            ("tags", joined(job.tags)),
            ("retries", job.retries),
            ("spawned", job.count),
            ("backlog", job.backlog or "-"),
            ("throttles", joined(limit_label(t) for t in job.throttles)),
            ("overlap", job.overlap + (f" ({job.buffered} buffered)" if job.buffered else "")),
            ("catch-up", duration(job.catchup) if job.catchup else "-"),
            ("jitter", duration(job.jitter) if job.jitter else "-"),
            ("pause after", f"{job.pause_after} failures" if job.pause_after else "-"),
            ("paused", f"yes ({job.failures} failures in a row)" if job.paused else "no"),
        ]
    )
    return Group(summary, data_panel(job.data))


def jobs_table(title: str | None, jobs: Iterable[Job]) -> TableView:
    rows = (
        (
            job.jid,
            job.klass_name,
            job.queue_name or "-",
            state_text(str(job.state)).append(f" ({why})" if (why := parked_text(job)) else ""),
            number(job.priority),
            joined(job.tags),
            short(job.data, 40),
        )
        for job in jobs
    )
    return table(title, ("jid", "class", "queue", "state", "priority#", "tags", "data"), rows)
