"""What the dashboard shows of a workflow (aqless.workflows): why it is parked, and its
steps. Filters of the templates, over a job's document (the action that signals one is
`aqless.web.actions.job_signal`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aqless.workflows.record import Parked, Step, parked, steps


def _parked(job: Mapping[str, Any]) -> Parked | None:
    return parked(str(job.get("state", "")), job.get("data"))


def parked_text(job: Mapping[str, Any]) -> str:
    """``waiting for signal 'approval'``; "" for a job that is not a parked workflow."""
    why = _parked(job)
    return "" if why is None else why.describe()


def parked_signal(job: Mapping[str, Any]) -> str:
    """The signal a parked workflow waits for ("" for none)."""
    why = _parked(job)
    return "" if why is None else why.signal


def parked_until(job: Mapping[str, Any]) -> float | None:
    """When a parked workflow wakes (None: not parked, or no timeout)."""
    why = _parked(job)
    return None if why is None else why.until


def workflow_steps(job: Mapping[str, Any]) -> list[Step]:
    """The steps a workflow keeps, in the order they first ran ([] for other jobs)."""
    return steps(job.get("data"))
