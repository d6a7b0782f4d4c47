"""How the end of a job's code becomes a server verb.

- it returned: ``complete`` (unless the code already completed, failed, retried or moved it);
- it raised ``Retry``: ``retry`` after the delay it asks for;
- it raised anything else (or ran past its timeout): ``retry`` with the delay a ``Backoff``
  gives, if the worker has one that covers the exception, else ``fail`` into the group
  ``<queue>-<ExceptionType>`` with the traceback as message.

A retry with no retries left becomes a ``fail`` into ``failed-retries-<queue>``, the group
the protocol itself uses, sent as ``fail`` so that the failure is published like any other.
"""

from __future__ import annotations

import random
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

__all__ = ["Backoff", "JobTimeoutError", "Retry", "failure_group", "failure_message"]

#: The longest failure message sent (tracebacks of deep recursion can be megabytes).
MAX_MESSAGE = 64 * 1024


class Retry(Exception):
    """Raise in job code to retry the job: back to its queue after `delay` seconds,
    spending one of its retries.

    Args:
        delay: seconds before the job may run again.
        group: the failure group recorded with the retry (default ``<queue>-Retry``).
        message: the message recorded with it (default: this exception's text).
    """

    def __init__(self, delay: float = 0, *, group: str | None = None, message: str = "") -> None:
        if not delay >= 0:
            raise ValueError(f"a retry delay must be a number >= 0, got {delay!r}")
        super().__init__(message or f"retry in {delay:g} s")
        self.delay = float(delay)
        self.group = group
        self.message = message or str(self)

    def __reduce__(self) -> tuple[Any, ...]:
        # pickled when isolated job code raises it in a child process: made again from
        # its own arguments (Exception's default passes the text as the delay)
        return (partial(type(self), group=self.group, message=self.message), (self.delay,))


class JobTimeoutError(Exception):
    """The job's code ran longer than its timeout and was cancelled."""


@dataclass(frozen=True, slots=True)
class Backoff:
    """Retry failing jobs after exponentially growing delays, while they have retries left.

    The n-th retry (n = retries spent so far) waits ``min(cap, base * factor ** n)`` seconds,
    of which a random part up to `jitter` (a fraction) is taken off, so that jobs failing
    together do not come back together.

    Args:
        base: the first delay, in seconds.
        factor: how much each delay grows.
        cap: the longest delay.
        jitter: the fraction of each delay that is random (0: none).
        on: the exception types it covers; others fail at once.
    """

    base: float = 1.0
    factor: float = 2.0
    cap: float = 300.0
    jitter: float = 0.5
    on: tuple[type[BaseException], ...] = (Exception,)
    random: Callable[[], float] = field(default=random.random, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not (self.base >= 0 and self.factor >= 1 and self.cap >= 0 and 0 <= self.jitter <= 1):
            raise ValueError(f"bad backoff: {self!r}")

    def covers(self, error: BaseException) -> bool:
        """Whether this backoff retries `error` (an instance of one of its `on` types)."""
        return isinstance(error, self.on)

    def delay(self, spent: int) -> float:
        """The delay before the retry after `spent` earlier retries."""
        full = min(self.cap, self.base * self.factor ** min(max(spent, 0), 64))
        return full * (1 - self.jitter * self.random())


def failure_group(queue: str, error: BaseException) -> str:
    return f"{queue}-{type(error).__name__}"


def failure_message(error: BaseException) -> str:
    """The traceback of `error`, at most MAX_MESSAGE characters (its end kept)."""
    text = "".join(traceback.format_exception(error))
    if len(text) > MAX_MESSAGE:
        text = "...\n" + text[-MAX_MESSAGE:]
    return text
