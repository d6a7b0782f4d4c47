"""How the end of a job's code becomes a server verb.

- it returned: ``complete`` (unless the code already completed, failed, retried or moved it);
- it raised ``Retry``: ``retry`` after the delay it asks for;
- it raised anything else (or ran past its timeout): a ``put`` back into its queue if a
  ``RequeuePolicy`` covers the exception and has requeues left for the job; else ``retry``
  with the delay a ``RetryPolicy`` (or ``Backoff``) gives, if one covers the exception and
  the job has attempts left; else ``fail`` into the group ``<queue>-<ExceptionType>`` with
  the traceback as message (see aqless._worker.policies).

A retry with no retries left becomes a ``fail`` into ``failed-retries-<queue>``, the group
the protocol itself uses, sent as ``fail`` so that the failure is published like any other.
"""

from __future__ import annotations

import inspect
import logging
import random
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from aqless import rules
from aqless._worker import defaults
from aqless._worker.policies import JobCallback, RequeuePolicy, RetryPolicy, attempt
from aqless.errors import ConfigurationError

if TYPE_CHECKING:
    from aqless.job import Job

__all__ = [
    "Backoff",
    "Decision",
    "JobTimeoutError",
    "Retry",
    "decide",
    "failure_group",
    "failure_message",
]

logger = logging.getLogger(__name__)

#: The longest failure message sent (tracebacks of deep recursion can be megabytes).
MAX_MESSAGE = 64 * 1024


class Retry(Exception):
    """Raise in job code to retry the job: back to its queue after `delay` seconds,
    spending one of its retries.

    Args:
        delay: seconds before the job may run again (default 0: at once).
        group: the failure group recorded with the retry (default ``<queue>-Retry``).
        message: the message recorded with it (default: this exception's text,
            ``retry in <delay> s``).

    Raises:
        InvalidValueError: a negative or non-finite `delay`, or an empty `group`.

    Examples:
        ```python
        @handlers.register
        async def fetch(job: aqless.Job) -> None:
            if not await upstream_ready():
                raise aqless.Retry(delay=30, message="upstream not ready")
        ```
    """

    def __init__(self, delay: float = 0, *, group: str | None = None, message: str = "") -> None:
        delay = rules.check("delay", delay, "job.retry")  # InvalidValueError, as job.retry's
        rules.check_optional("failure_group", group, "job.retry")
        super().__init__(message or f"retry in {delay:g} s")
        self.delay = float(delay)
        self.group = group
        self.message = message or str(self)


class JobTimeoutError(Exception):
    """The job's code ran longer than its timeout and was cancelled (public as
    ``aqless.JobTimeoutError``: the name a failure's traceback gives it). The worker raises
    it in the job's place and handles it as any failure: retried if its retry policy covers
    it, else failed into ``<queue>-JobTimeoutError``.

    Examples:
        ```python
        retry = aqless.RetryPolicy(on=(aqless.JobTimeoutError,), max_attempts=3)
        ```
    """

    __module__ = "aqless"


@dataclass(frozen=True, slots=True)
class Backoff:
    """Retry failing jobs after exponentially growing delays, while they have retries left.

    The n-th retry (n = retries spent so far) waits ``min(cap, base * factor ** n)`` seconds,
    of which a random part up to `jitter` (a fraction) is taken off, so that jobs failing
    together do not come back together.

    Args:
        base: the first delay, in seconds (default 1.0).
        factor: how much each delay grows (default 2.0).
        cap: the longest delay, in seconds (default 300.0).
        jitter: the fraction of each delay that is random, 0 to 1 (default 0.5).
        on: the exception types it covers (default ``(Exception,)``); others fail at once.
        random: draws the jitter, a number in [0, 1) (default `random.random`).

    Raises:
        ConfigurationError: a negative `base` or `cap`, a `factor` below 1, or a `jitter`
            outside 0 to 1.

    Examples:
        ```python
        worker = aqless.Worker(client, ["emails"], retry=aqless.Backoff(base=5.0, cap=600.0))
        ```
    """

    base: float = 1.0
    factor: float = 2.0
    cap: float = defaults.BACKOFF_CAP
    jitter: float = 0.5
    on: tuple[type[BaseException], ...] = (Exception,)
    random: Callable[[], float] = field(default=random.random, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not (self.base >= 0 and self.factor >= 1 and self.cap >= 0 and 0 <= self.jitter <= 1):
            raise ConfigurationError(f"bad backoff: {self!r}")

    def covers(self, error: BaseException) -> bool:
        """Whether this backoff retries `error` (an instance of one of its `on` types).

        Examples:
            ```python
            assert aqless.Backoff().covers(ValueError())
            ```
        """
        return isinstance(error, self.on)

    def delay(self, spent: int) -> float:
        """The delay in seconds before the retry after `spent` earlier retries.

        Examples:
            ```python
            assert aqless.Backoff(base=1.0, jitter=0.0).delay(3) == 8.0
            ```
        """
        return self.as_policy().delay_after(spent)

    def as_policy(self) -> RetryPolicy:
        """The same retries as a RetryPolicy (exponential, with no cap on attempts).

        Examples:
            ```python
            policy = aqless.Backoff(base=2.0).as_policy()
            ```
        """
        return RetryPolicy(
            delay=self.base,
            factor=self.factor,
            cap=self.cap,
            jitter=self.jitter,
            on=self.on,
            random=self.random,
        )


def retry_policy(policy: RetryPolicy | Backoff | None) -> RetryPolicy | None:
    """`policy` as a RetryPolicy."""
    return policy.as_policy() if isinstance(policy, Backoff) else policy


@dataclass(frozen=True, slots=True)
class Decision:
    """What the worker sends for a job whose code raised.

    Attributes:
        verb: ``requeue`` (a put into the job's queue), ``retry`` or ``fail``.
        group: the failure group recorded (with a retry or a fail).
        message: the message recorded with it.
        delay: seconds before the job may run again (requeue, retry).
        attempt: the run of the job that raised (see aqless._worker.policies.attempt).
        callback: the policy's callback, to call before sending.
    """

    verb: Literal["requeue", "retry", "fail"]
    group: str
    message: str
    delay: float = 0.0
    attempt: int = 1
    callback: JobCallback | None = None

    async def notify(self, job: Job, error: BaseException) -> None:
        """Call the callback (awaiting what it returns); its own exceptions are logged."""
        if self.callback is None:
            return
        try:
            result = self.callback(job, error)
            if inspect.isawaitable(result):
                await result
        except Exception:
            logger.exception("the %s callback for job %s failed", self.verb, job.jid)


def decide(
    job: Job,
    error: BaseException,
    *,
    retry: RetryPolicy | None,
    requeue: Sequence[RequeuePolicy] = (),
) -> Decision:
    """What to send for `job`, whose code raised `error`, under the policies given. The
    first requeue policy covering the exception decides whether the job is requeued; a
    requeue is counted in the job's data."""
    queue, run = job.queue_name, attempt(job)
    if isinstance(error, Retry):
        if job.retries_left <= 0:
            return Decision("fail", out_of_retries(queue), error.message, attempt=run)
        group = error.group or f"{queue}-Retry"
        return Decision("retry", group, error.message, error.delay, run)
    group, message = failure_group(queue, error), failure_message(error)
    for policy in requeue:
        kind = policy.covering(error)
        if kind is not None:
            if policy.count(job, kind):
                delay = policy.draw_delay()
                return Decision("requeue", group, message, delay, run, policy.on_requeue)
            break
    if retry is None or not retry.covers(error):
        return Decision("fail", group, message, attempt=run)
    if retry.exhausted(job):
        return Decision("fail", group, message, attempt=run, callback=retry.on_give_up)
    if job.retries_left <= 0:
        group = out_of_retries(queue)
        return Decision("fail", group, message, attempt=run, callback=retry.on_give_up)
    delay = retry.delay_after(run - 1)
    return Decision("retry", group, message, delay, run, retry.on_retry)


def out_of_retries(queue: str) -> str:
    """The protocol's failure group for the jobs of `queue` that ran out of retries."""
    return f"failed-retries-{queue}"


def failure_group(queue: str, error: BaseException) -> str:
    return f"{queue}-{type(error).__name__}"


def failure_message(error: BaseException) -> str:
    """The traceback of `error`, at most MAX_MESSAGE characters (its end kept)."""
    text = "".join(traceback.format_exception(error))
    if len(text) > MAX_MESSAGE:
        text = "...\n" + text[-MAX_MESSAGE:]
    return text
