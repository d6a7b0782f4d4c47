"""Completed jobs on the dashboard: the queue each ran in, when it finished, how long its
last run took and a preview of its result, from its history and its kept result (a
complete job's `queue` field is empty: the queue is only in its history)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

from aqless.documents import result_document
from aqless.models import HANDED_OUT
from aqless.sharding.client import AnyClient

JSON = dict[str, Any]

PREVIEW_CHARS: Final = 120


def last_queue(history: Sequence[JSON]) -> str | None:
    """The queue of the newest history entry naming one (`queue`, or classic `q`)."""
    for entry in reversed(history):
        queue = entry.get("queue") or entry.get("q")
        if queue:
            return str(queue)
    return None


def last_run(history: Sequence[JSON]) -> tuple[float | None, float | None]:
    """When the job was last done, and how long it ran: from its last pop (or take-back)
    to that."""
    finished = popped = None
    for entry in reversed(history):
        if finished is None and entry.get("what") == "done":
            finished = float(entry["when"])
        elif finished is not None and entry.get("what") in HANDED_OUT:
            popped = float(entry["when"])
            break
    duration = None if finished is None or popped is None else max(0.0, finished - popped)
    return finished, duration


def preview(value: Any, limit: int = PREVIEW_CHARS) -> str:
    """`value` as compact JSON on one line, cut after `limit` characters."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 1] + "…"


async def with_outcome(client: AnyClient, jobs: Sequence[JSON]) -> list[JSON]:
    """The completed job documents, each with `queue` (from its history when empty),
    `finished_at`, `duration` (seconds, None when unknown), `result` (as on the job page)
    and `result_preview` (None without a kept result)."""
    found = []
    for job in jobs:
        history = job.get("history") or []
        finished, duration = last_run(history)
        result = result_document(await client.jobs.stored_result(str(job["jid"])))
        shown = None
        if result is not None and result["dropped"] is None:
            shown = preview(result["value"])
        found.append(
            {
                **job,
                "queue": job.get("queue") or last_queue(history) or "",
                "finished_at": finished,
                "duration": duration,
                "result": result,
                "result_preview": shown,
            }
        )
    return found
