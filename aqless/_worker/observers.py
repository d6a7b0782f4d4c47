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
    """Told what became of each job a worker ran. Both methods do nothing here: subclass
    it and override what you need. An observer is called in the worker's event loop after
    the server took the job's outcome: it must not block; what it raises is logged and
    ignored.

    Examples:
        ```python
        class SlowJobs(aqless.WorkerObserver):
            def job_finished(self, job, queue, outcome, seconds):
                if seconds > 60:
                    log.warning("%s took %.0f s (%s)", job.jid, seconds, outcome)

        worker = aqless.Worker(client, ["emails"], observers=[SlowJobs()])
        ```
    """

    def job_finished(self, job: Job, queue: str, outcome: str, seconds: float) -> None:
        """A job's outcome was sent (or could not be): `queue` is the one it was popped
        from, `outcome` what became of it (``completed``, ``failed``, ``retried``,
        ``advanced``, ``handed_back``, ``parked``, ``canceled``, ``lost`` or ``unreported``; see
        ``Worker.perform``), `seconds` the time since its code started.

        Examples:
            ```python
            def job_finished(self, job, queue, outcome, seconds):
                durations.labels(queue, outcome).observe(seconds)
            ```
        """

    def job_failed(self, job: Job, error: BaseException, decision: Decision) -> None:
        """An exception ended the job's code and the server took what was sent for it:
        `decision` says which: its ``verb`` is ``"fail"``, ``"retry"`` or ``"requeue"``.

        Examples:
            ```python
            def job_failed(self, job, error, decision):
                if decision.verb == "fail":
                    alert(f"{job.jid} failed: {error!r}")
            ```
        """
