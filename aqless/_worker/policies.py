"""Failure policies: what a worker does with a job whose code raised.

- ``RequeuePolicy``: qless's RequeueExceptions. The job goes back to its queue after a
  random delay, without spending a retry, up to ``max_requeues`` times per exception type.
  The count is kept in the job's data under ``requeues_by_exception``, as qless's Ruby
  workers keep it, so that a mixed fleet shares it.
- ``RetryPolicy``: the job is retried (spending one of its retries) after a delay that a
  strategy gives, until it has run ``max_attempts`` times; then it fails.

A worker holds default policies (``Worker(retry=..., requeue=[...])``); a handler's
(``@handlers.register(retry=..., requeue=[...])``) come first for its jobs: its requeue
policies before the worker's, and its retry policy instead of the worker's.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypeAlias

from aqless._worker import defaults
from aqless.errors import ConfigurationError

if TYPE_CHECKING:
    from aqless.job import Job

__all__ = ["JobCallback", "RequeuePolicy", "RetryPolicy", "Strategy", "attempt"]

#: Told of a job and the exception its code raised; a plain function or a coroutine
#: function (a plain one runs in the event loop: keep it quick).
JobCallback: TypeAlias = Callable[["Job", BaseException], Awaitable[None] | None]
Strategy: TypeAlias = Literal["fixed", "linear", "exponential"]

#: The job data's field counting requeues by exception name (qless Ruby's own name for it).
REQUEUES_FIELD = "requeues_by_exception"


def attempt(job: Job) -> int:
    """Which run of the job this is: 1, plus the retries it has spent (a put into a queue,
    a requeue included, renews its retries and so starts the count again)."""
    return max(job.original_retries - job.retries_left, 0) + 1


def _is_exception_type(kind: object) -> bool:
    return isinstance(kind, type) and issubclass(kind, BaseException)


def _exception_types(on: object, owner: str) -> None:
    if not isinstance(on, tuple) or not on or not all(map(_is_exception_type, on)):
        raise ConfigurationError(f"{owner}: `on` must be a tuple of exception types, got {on!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    """Retry the jobs whose code raised one of the `on` exceptions, with growing delays.

    The n-th retry (n = 0, 1, ...: the retries spent so far) waits, before `cap` and
    jitter: ``delay`` (fixed), ``delay * (n + 1)`` (linear) or ``delay * factor ** n``
    (exponential). A random part of up to `jitter` (a fraction) is then taken off, so that
    jobs failing together do not come back together.

    Args:
        strategy: ``"fixed"``, ``"linear"`` or ``"exponential"`` (the default).
        delay: seconds: the first delay (and every one, when fixed); default 1.0.
        factor: how much each delay grows (exponential only); default 2.0.
        cap: seconds: the longest delay (default 300.0).
        jitter: the fraction of each delay that is random, 0 to 1 (default 0: none).
        max_attempts: how many times the job may run (default None: as long as it has
            retries, the put's ``retries``, default 5).
            The exception of its last run fails it into ``<queue>-<ExceptionType>``. A job
            out of retries fails into ``failed-retries-<queue>`` whatever this says.
        on: the exception types it covers (default ``(Exception,)``); others fail at once.
        on_retry: called with the job and the exception before each retry is sent
            (default None).
        on_give_up: called with the job and a covered exception that will not be retried,
            before the fail is sent. If it settles the job itself (``job.move`` to a dead
            letter queue, say), the worker sends nothing (default None).
        random: draws the jitter, a number in [0, 1) (default `random.random`; tests give
            their own).

    Raises:
        ConfigurationError: an unknown `strategy`; a negative `delay` or `cap`; a `factor`
            below 1; a `jitter` outside 0 to 1; `max_attempts` below 1; `on` not a
            non-empty tuple of exception types.

    Examples:
        ```python
        retry = aqless.RetryPolicy(
            delay=2.0,  # 2, 4, 8, 16 s...
            cap=60.0,
            jitter=0.2,
            max_attempts=5,
            on=(TimeoutError, ConnectionError),
        )
        worker = aqless.Worker(client, ["emails"], retry=retry)
        ```
    """

    strategy: Strategy = "exponential"
    delay: float = 1.0
    factor: float = 2.0
    cap: float = defaults.BACKOFF_CAP
    jitter: float = 0.0
    max_attempts: int | None = None
    on: tuple[type[BaseException], ...] = (Exception,)
    on_retry: JobCallback | None = field(default=None, compare=False)
    on_give_up: JobCallback | None = field(default=None, compare=False)
    random: Callable[[], float] = field(default=random.random, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.strategy not in ("fixed", "linear", "exponential"):
            raise ConfigurationError(f"unknown retry strategy {self.strategy!r}")
        if not (self.delay >= 0 and self.factor >= 1 and self.cap >= 0 and 0 <= self.jitter <= 1):
            raise ConfigurationError(f"bad retry policy: {self!r}")
        if self.max_attempts is not None and self.max_attempts < 1:
            raise ConfigurationError(f"max_attempts must be at least 1, got {self.max_attempts}")
        _exception_types(self.on, "RetryPolicy")

    def covers(self, error: BaseException) -> bool:
        """Whether this policy retries `error` (an instance of one of its `on` types).

        Examples:
            ```python
            assert aqless.RetryPolicy(on=(TimeoutError,)).covers(TimeoutError())
            ```
        """
        return isinstance(error, self.on)

    def exhausted(self, job: Job) -> bool:
        """Whether the job's current run was its last allowed one (by `max_attempts`).

        Examples:
            ```python
            if policy.exhausted(job):
                ...  # the next failure fails the job
            ```
        """
        return self.max_attempts is not None and attempt(job) >= self.max_attempts

    def delay_after(self, spent: int) -> float:
        """The delay in seconds before the retry that follows `spent` earlier retries.

        Examples:
            ```python
            policy = aqless.RetryPolicy(delay=1.0, factor=2.0, cap=5.0)
            assert [policy.delay_after(n) for n in range(4)] == [1.0, 2.0, 4.0, 5.0]
            ```
        """
        n = min(max(spent, 0), 64)
        if self.strategy == "fixed":
            full = self.delay
        elif self.strategy == "linear":
            full = self.delay * (n + 1)
        else:
            full = self.delay * self.factor**n
        return min(self.cap, full) * (1 - self.jitter * self.random())


@dataclass(frozen=True, slots=True, kw_only=True)
class RequeuePolicy:
    """Put the jobs whose code raised one of the `on` exceptions back into their queue,
    after a random delay, without spending a retry (qless's ``requeue_on``).

    Each exception type of `on` counts its requeues apart, in the job's data
    (``requeues_by_exception``, keyed by the type's name). Once it reached `max_requeues`
    the exception is handled as if no requeue policy covered it (a retry policy, or a fail).
    A requeue is a put: like any put it renews the job's retries. Jobs whose data is not a
    JSON object cannot keep the count and are not requeued.

    Args:
        on: the exception types it covers (a non-empty tuple).
        max_requeues: how many times a job is requeued for each type (qless Ruby's
            ``max_attempts``), from 0.
        delay: the delay's range in seconds, ``(min, max)``; each requeue draws one
            (default ``(0.0, 0.0)``: at once).
        on_requeue: called with the job and the exception before each requeue is sent
            (default None).
        random: draws the delay, a number in [0, 1) (default `random.random`).

    Raises:
        ConfigurationError: `on` not a non-empty tuple of exception types; a `delay` not
            ``0 <= min <= max``; a negative `max_requeues`.

    Examples:
        ```python
        requeue = aqless.RequeuePolicy(
            on=(RateLimitedByPartner,), max_requeues=10, delay=(30.0, 90.0)
        )
        worker = aqless.Worker(client, ["sync"], requeue=[requeue])
        ```
    """

    on: tuple[type[BaseException], ...]
    max_requeues: int
    delay: tuple[float, float] = (0.0, 0.0)
    on_requeue: JobCallback | None = field(default=None, compare=False)
    random: Callable[[], float] = field(default=random.random, repr=False, compare=False)

    def __post_init__(self) -> None:
        _exception_types(self.on, "RequeuePolicy")
        low, high = self.delay
        if not 0 <= low <= high:
            raise ConfigurationError(
                f"a requeue delay must be (min, max) with 0 <= min <= max: {self.delay!r}"
            )
        if self.max_requeues < 0:
            raise ConfigurationError(f"max_requeues must be >= 0, got {self.max_requeues}")

    def covering(self, error: BaseException) -> type[BaseException] | None:
        """The first of the `on` types that `error` is an instance of, or None.

        Examples:
            ```python
            kind = policy.covering(error)
            ```
        """
        return next((kind for kind in self.on if isinstance(error, kind)), None)

    def draw_delay(self) -> float:
        """A delay in seconds drawn from the `delay` range.

        Examples:
            ```python
            assert 30.0 <= policy.draw_delay() <= 90.0
            ```
        """
        low, high = self.delay
        return low + (high - low) * self.random()

    def count(self, job: Job, kind: type[BaseException]) -> bool:
        """Count one more requeue of `job` for `kind` in its data; False (and nothing
        counted) when `kind` used up its requeues or the data cannot hold the count.

        Examples:
            ```python
            if policy.count(job, TimeoutError):
                ...  # the worker requeues it
            ```
        """
        data = job.data
        if not isinstance(data, dict):
            return False
        counts = data.get(REQUEUES_FIELD, {})
        if not isinstance(counts, dict):
            return False
        done = counts.get(kind.__name__, 0)
        if not isinstance(done, int) or done >= self.max_requeues:
            return False
        data[REQUEUES_FIELD] = {**counts, kind.__name__: done + 1}
        return True
