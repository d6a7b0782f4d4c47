"""A log line per job, for operators: what became of it at info level (``aqless-run -v``),
and its start too at debug level (``-vv``). Nothing by default.

The lines carry the job's facts as extra fields as well (``jid``, ``klass``, ``queue``,
``outcome``, ``seconds``, ``raised``), which ``--log-json`` writes as keys of their own.
Silence them alone with ``logging.getLogger("aqless._worker.joblog").setLevel(...)``.
"""

from __future__ import annotations

import logging

from aqless.job import Job

__all__ = ["finished", "started", "wanted"]

logger = logging.getLogger(__name__)


def wanted() -> bool:
    """Whether a job's outcome is logged (worth timing the job for)."""
    return logger.isEnabledFor(logging.INFO)


def started(job: Job) -> None:
    """The job's code is about to run (at debug level)."""
    if logger.isEnabledFor(logging.DEBUG):
        logger.debug(
            "job %s (%s, queue %s): started",
            job.jid,
            job.klass_name,
            job.queue_name,
            extra={"jid": job.jid, "klass": job.klass_name, "queue": job.queue_name},
        )


def finished(job: Job, queue: str, outcome: str, seconds: float, raised: str | None) -> None:
    """What became of the job popped from `queue` (see aqless._worker.perform.outcome_of),
    `seconds` after it started; `raised`: the type of the exception its code raised."""
    if not logger.isEnabledFor(logging.INFO):
        return
    because = f" ({raised})" if raised is not None else ""
    logger.info(
        "job %s (%s, queue %s): %s%s in %.3f s",
        job.jid,
        job.klass_name,
        queue,
        outcome,
        because,
        seconds,
        extra={
            "jid": job.jid,
            "klass": job.klass_name,
            "queue": queue,
            "outcome": outcome,
            "seconds": round(seconds, 6),
            "raised": raised,
        },
    )
