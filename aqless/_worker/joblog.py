"""A log line per job, for operators: a job the worker failed at error level (so by
default: its class, queue, failure group and the exception's type and text); what became of
every other job at info level (``aqless-run -v``), and its start too at debug level (``-vv``).

The lines carry the job's facts as extra fields as well (``jid``, ``klass``, ``queue``,
``outcome``, ``seconds``, ``raised``; a failed job's ``group`` and ``failure``), which
``--log-json`` writes as keys of their own. Silence the info lines alone with
``logging.getLogger("aqless._worker.joblog").setLevel(logging.WARNING)``.
"""

from __future__ import annotations

import logging

from aqless.job import Job

__all__ = ["failure", "finished", "started", "wanted"]

#: The longest exception text a failed job's line carries.
MAX_TEXT = 500

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


def failure(error: BaseException) -> str:
    """The exception's type and the first line of its text, for a failed job's line."""
    lines = str(error).strip().splitlines()
    text = lines[0] if lines else ""
    if len(text) > MAX_TEXT or len(lines) > 1:
        text = text[:MAX_TEXT] + " …"
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def finished(
    job: Job,
    queue: str,
    outcome: str,
    seconds: float | None,
    raised: str | None,
    failed: tuple[str, str] | None = None,
) -> None:
    """What became of the job popped from `queue` (see aqless._worker.perform.outcome_of),
    `seconds` after it started (None: not timed); `raised`: the type of the exception its
    code raised; `failed`: the failure group the worker failed it into, and why."""
    took = "" if seconds is None else f" in {seconds:.3f} s"
    facts: dict[str, object] = {
        "jid": job.jid,
        "klass": job.klass_name,
        "queue": queue,
        "outcome": outcome,
        "seconds": None if seconds is None else round(seconds, 6),
        "raised": raised,
    }
    if failed is not None:
        group, why = failed
        logger.error(
            "job %s (%s, queue %s): failed into %s: %s%s",
            job.jid,
            job.klass_name,
            queue,
            group,
            why,
            took,
            extra={**facts, "outcome": "failed", "group": group, "failure": why},
        )
        return
    if not logger.isEnabledFor(logging.INFO):
        return
    because = f" ({raised})" if raised is not None else ""
    logger.info(
        "job %s (%s, queue %s): %s%s%s",
        job.jid,
        job.klass_name,
        queue,
        outcome,
        because,
        took,
        extra=facts,
    )
