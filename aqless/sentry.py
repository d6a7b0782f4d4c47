"""Error reporting to Sentry (the ``sentry`` extra: ``pip install aqless[sentry]``).

``SentryReporter().instrument(worker)`` reports each exception that failed a job, once the
worker sent the fail, through the Sentry client that ``sentry_sdk.init`` set up. The event
carries the job's jid, queue, klass, tags, attempt and failure group as tags (``aqless.*``),
and the same with the job's priority and retries in the ``aqless job`` context. Exceptions
that only retried or requeued the job are reported when asked for; an ``aqless.Retry``
never is (it is control flow, not an error).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aqless._worker.observers import WorkerObserver
from aqless._worker.outcomes import Decision, Retry
from aqless.errors import needs_extra

with needs_extra("sentry", "aqless.sentry"):
    import sentry_sdk

if TYPE_CHECKING:
    from aqless.job import Job
    from aqless.worker import Worker

__all__ = ["SentryReporter"]

#: Sentry's longest tag value.
MAX_TAG = 200


class SentryReporter(WorkerObserver):
    """Reports jobs' failures to Sentry: a worker observer (`aqless.WorkerObserver`).

    Args:
        retries: also report the exceptions after which the job was retried (default
            False).
        requeues: also report the exceptions after which the job was requeued (default
            False).

    Examples:
        ```python
        import sentry_sdk
        from aqless.sentry import SentryReporter

        sentry_sdk.init(dsn=DSN)
        SentryReporter(retries=True).instrument(worker)
        ```
    """

    def __init__(self, *, retries: bool = False, requeues: bool = False) -> None:
        self.retries = retries
        self.requeues = requeues

    def instrument(self, worker: Worker) -> None:
        """Report `worker`'s failures (idempotent).

        Examples:
            ```python
            SentryReporter().instrument(worker)
            ```
        """
        if self not in worker.observers:
            worker.observers.append(self)

    def wants(self, error: BaseException, decision: Decision) -> bool:
        """Whether an exception that had `decision` sent is reported: a fail always, a
        retry or requeue when asked for, an `aqless.Retry` never.

        Examples:
            ```python
            class OnlyTimeouts(SentryReporter):
                def wants(self, error, decision):
                    return isinstance(error, aqless.JobTimeoutError)
            ```
        """
        if isinstance(error, Retry):
            return False
        if decision.verb == "retry":
            return self.retries
        if decision.verb == "requeue":
            return self.requeues
        return True

    def job_failed(self, job: Job, error: BaseException, decision: Decision) -> None:
        """Called by the worker: `report`.

        Examples:
            ```python
            worker.observers.append(SentryReporter())  # what instrument() does
            ```
        """
        self.report(job, error, decision)

    def report(self, job: Job, error: BaseException, decision: Decision) -> None:
        """Send one event for `error` (when wanted), with the job's tags and context.

        Examples:
            ```python
            reporter.report(job, error, decision)
            ```
        """
        if not self.wants(error, decision):
            return
        with sentry_sdk.new_scope() as scope:
            tags = {
                "jid": job.jid,
                "queue": job.queue_name,
                "klass": job.klass_name,
                "attempt": str(decision.attempt),
                "group": decision.group,
                "outcome": decision.verb,
                "tags": ",".join(job.tags),
            }
            for name, value in tags.items():
                scope.set_tag(f"aqless.{name}", value[:MAX_TAG])
            scope.set_context(
                "aqless job",
                {
                    **tags,
                    "attempt": decision.attempt,
                    "tags": list(job.tags),
                    "priority": job.priority,
                    "retries": job.original_retries,
                },
            )
            sentry_sdk.capture_exception(error)
