"""Run at a time: a put's ``at=``, turned into the protocol's delay on the client's clock."""

from __future__ import annotations

import datetime
import math
from collections.abc import Callable
from typing import TypeAlias

from aqless.errors import ConfigurationError, InvalidArgumentError

#: When a job may run: a timezone-aware datetime, or a Unix time in seconds.
RunAt: TypeAlias = datetime.datetime | float


def checked_at(delay: float | None, at: RunAt | None) -> float | None:
    """`at` as a Unix time (None without one), refused with a `delay` beside it
    (ConfigurationError), as a naive datetime (ConfigurationError) or as no finite time
    (InvalidArgumentError)."""
    if at is None:
        return None
    if delay is not None:
        raise ConfigurationError("give delay= (seconds from now) or at= (a time), not both")
    if isinstance(at, datetime.datetime):
        if at.utcoffset() is None:
            raise ConfigurationError(
                f"at={at.isoformat()} is a naive datetime: its time zone is unknown, so its"
                " moment is too; give one (datetime.now(datetime.UTC), tzinfo=...)"
            )
        return at.timestamp()
    given: object = at  # whatever an untyped caller passed
    if isinstance(given, bool) or not isinstance(given, int | float) or not math.isfinite(given):
        raise InvalidArgumentError("at", f"a datetime or a finite Unix time, not {at!r}")
    return float(given)


def delay_until(delay: float | None, at: RunAt | None, clock: Callable[[], float]) -> float | None:
    """The delay of a put: `delay`, or the seconds from `clock`'s now to `at` (0 for a time
    already past: the job runs now)."""
    moment = checked_at(delay, at)
    return delay if moment is None else max(0.0, moment - clock())
