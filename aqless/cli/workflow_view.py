"""The terminal view of a workflow (aqless.workflows): why it is parked, and its steps."""

from __future__ import annotations

from aqless.cli.render import TableView, ago, moment, short, table
from aqless.job import Job
from aqless.workflows.record import parked, steps


def parked_text(job: Job) -> str | None:
    """``waiting for signal 'approval' until 2030-... (in 3 h)``; None unless parked."""
    why = parked(job.state, job.data)
    if why is None:
        return None
    if why.until is None:
        return f"{why.describe()}, no timeout"
    return f"{why.describe()} until {moment(why.until)} ({ago(why.until)})"


def steps_view(job: Job) -> TableView | None:
    """The workflow's steps as a timeline; None for a job that kept none."""
    kept = steps(job.data)
    if not kept:
        return None
    rows = (
        (
            step.name,
            moment(step.at) if step.at is not None else "-",
            "-" if step.attempt is None else str(step.attempt),
            "-" if step.seconds is None else f"{step.seconds:.3f} s",
            str(step.failures),
            short(step.result, 40) if step.done else "(not done)",
        )
        for step in kept
    )
    columns = ("step", "done at", "attempt", "ran", "failures", "result")
    return table("workflow steps", columns, rows)
