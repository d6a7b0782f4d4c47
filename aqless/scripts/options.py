"""The configuration options the scripts read, with the type each one must have: a value
the scripts cannot read as its type would be stored, then silently replaced by the option's
default (``heartbeat`` = ``banana`` locks jobs for 60 s). `checked_value` refuses it first."""

from __future__ import annotations

import math

from aqless.errors import ConfigValueError

NUMBER = "a number"
WHOLE_NUMBER = "a whole number"

#: The options the scripts read (aqless/scripts/lua: config.lua, dialect.lua and their
#: callers), by name; `application` and unknown options take any text.
TYPES: dict[str, str] = {
    "heartbeat": NUMBER,
    "grace-period": NUMBER,
    "jobs-history": NUMBER,
    "max-worker-age": NUMBER,
    "jobs-history-count": WHOLE_NUMBER,
    "max-job-history": WHOLE_NUMBER,
    "max-pop-retry": WHOLE_NUMBER,
    "result-max-bytes": WHOLE_NUMBER,
    "stats-history": WHOLE_NUMBER,
    "histogram-history": WHOLE_NUMBER,
}

#: A queue's own options: ``<queue><suffix>``.
QUEUE_TYPES: dict[str, str] = {
    "-heartbeat": NUMBER,
    "-max-pop-retry": WHOLE_NUMBER,
    "-max-concurrency": WHOLE_NUMBER,
}


def expected_type(option: str) -> str | None:
    """What `option`'s value must be, or None when any text will do."""
    if option in TYPES:
        return TYPES[option]
    for suffix, kind in QUEUE_TYPES.items():
        if option.endswith(suffix) and len(option) > len(suffix):
            return kind
    return None


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
