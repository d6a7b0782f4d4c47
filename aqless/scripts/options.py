"""The configuration options the scripts read: what each means, its unit, and the type its
value must have. One table for the client's check (`checked_value`: a value the scripts
cannot read as its type would be stored, then silently replaced by the option's default, so
``heartbeat`` = ``banana`` locked jobs for 60 s), the dashboard's config page and the CLI.

Options named after a queue (``<queue>-heartbeat``...) are described by their suffix.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

from aqless.errors import ConfigValueError

NUMBER = "a number"
WHOLE_NUMBER = "a whole number"


@dataclass(frozen=True, slots=True)
class Option:
    """An option's meaning, the unit of its value ("" when it has none) and the type its
    value must have (None: any text)."""

    description: str
    unit: str = ""
    kind: str | None = None


#: The options the scripts read (aqless/scripts/lua: config.lua, dialect.lua and their
#: callers) and those aqless writes, by name.
OPTIONS: Final[dict[str, Option]] = {
    "application": Option("A name for user interfaces; the script never reads it."),
    "heartbeat": Option(
        "How long a popped job's lock lasts unless its worker heartbeats.", "seconds", NUMBER
    ),
    "grace-period": Option(
        "Between the lock-lost warning to a worker and the job being taken back "
        "(0 or less: taken back at once).",
        "seconds",
        NUMBER,
    ),
    "jobs-history": Option("How long completed jobs are kept.", "seconds", NUMBER),
    "jobs-history-count": Option("How many completed jobs are kept at most.", "jobs", WHOLE_NUMBER),
    "max-job-history": Option(
        "History entries kept per job (0 or less: all of them).", "entries", WHOLE_NUMBER
    ),
    "max-pop-retry": Option(
        "Passes a pop makes over the queue when throttles or rate limits hold jobs back.",
        "passes",
        WHOLE_NUMBER,
    ),
    "max-worker-age": Option(
        "A worker idle this long is forgotten (its jobs stay).", "seconds", NUMBER
    ),
    "result-max-bytes": Option(
        "The largest job result kept; a larger one is dropped (the job still completes).",
        "bytes",
        WHOLE_NUMBER,
    ),
    "stats-history": Option(
        "Days of summary statistics to keep; no server reads it.", "days", WHOLE_NUMBER
    ),
    "histogram-history": Option(
        "Days of histograms to keep; no server reads it.", "days", WHOLE_NUMBER
    ),
    "aqless-pubsub": Option(
        "Written by a sharded deployment: 'sharded' publishes events with SPUBLISH."
    ),
}

#: A queue's own options, by suffix: ``emails-heartbeat``...
PER_QUEUE: Final[dict[str, Option]] = {
    "-heartbeat": Option("This queue's lock duration (instead of heartbeat).", "seconds", NUMBER),
    "-max-concurrency": Option(
        "Jobs of this queue running at once at most (0: no limit).", "jobs", WHOLE_NUMBER
    ),
    "-max-pop-retry": Option("This queue's max-pop-retry.", "passes", WHOLE_NUMBER),
}


def describe(option: str) -> Option | None:
    """What `option` is, a global or per-queue one; None for one the scripts do not read."""
    known = OPTIONS.get(option)
    if known is not None:
        return known
    for suffix, described in PER_QUEUE.items():
        if option.endswith(suffix) and len(option) > len(suffix):
            return described
    return None


def expected_type(option: str) -> str | None:
    """What `option`'s value must be, or None when any text will do."""
    described = describe(option)
    return None if described is None else described.kind


def _number(value: str | float) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def checked_value(option: str, value: str | float) -> str | float:
    """`value` if it fits `option`'s type, else ConfigValueError naming both."""
    kind = expected_type(option)
    if kind is None:
        return value
    number = _number(value)
    if number is None or (kind == WHOLE_NUMBER and not number.is_integer()):
        raise ConfigValueError(option, value, kind)
    return value
