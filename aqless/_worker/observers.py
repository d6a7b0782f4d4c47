"""WorkerObserver: what a worker tells about its jobs, for metrics and error reporting.

Give observers to ``Worker(observers=[...])`` or append them to ``worker.observers``;
subclass `WorkerObserver` and override what you need (aqless.metrics and aqless.sentry are
observers). An observer is called in the worker's event loop, after the server took the
job's outcome: it must not block; an exception it raises is logged and ignored.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aqless._worker.outcomes import Decision
    from aqless.job import Job

__all__ = ["WorkerObserver"]


class WorkerObserver:
    """Told what became of each job a worker ran. Both methods do nothing here."""

    def job_finished(self, job: Job, queue: str, outcome: str, seconds: float) -> None:
        """A job's outcome was sent (or could not be): `queue` is the one it was popped
        from, `outcome` what became of it (``completed``, ``failed``, ``retried``,
        ``advanced``, ``handed_back``, ``parked``, ``canceled``, ``lost`` or ``unreported``; see
        ``Worker.perform``), `seconds` the time since its code started."""

    def job_failed(self, job: Job, error: BaseException, decision: Decision) -> None:
        """An exception ended the job's code and the server took what was sent for it:
        `decision` says which (fail, retry or requeue; see aqless._worker.outcomes.Decision)."""
