"""Job progress on the dashboard: each job document with its last report (or None)."""

from __future__ import annotations

from typing import Any

from aqless.documents import progress_document
from aqless.sharding.client import AnyClient

JSON = dict[str, Any]


async def with_progress(client: AnyClient, jobs: list[JSON]) -> list[JSON]:
    """The job documents, each with ``progress`` (one call for them all)."""
    if not jobs:
        return jobs
    reports = await client.jobs.progress(*(str(job["jid"]) for job in jobs))
    return [{**job, "progress": progress_document(reports.get(job["jid"]))} for job in jobs]
