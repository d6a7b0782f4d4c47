"""How a duration reads wherever the CLI and the dashboard show one: in the largest units
that keep it short (``850 ms``, ``12.5 s``, ``58 min 47 s``, ``2 h 5 min``, ``3 d 4 h``),
never as a bare count of seconds; and a count of things (``1 job``, ``3 jobs``)."""

from __future__ import annotations

import math


def duration(seconds: float) -> str:
    """`seconds` in human units: ``850 ms``, ``12.5 s``, ``58 min 47 s``, ``2 h 5 min``,
    ``3 d 4 h`` (a negative one with a minus sign)."""
    sign = "-" if seconds < 0 else ""
    seconds = abs(seconds)
    if not math.isfinite(seconds):
        return f"{sign}forever" if seconds == math.inf else "unknown"
    if seconds < 1:
        return f"{sign}{seconds * 1000:.0f} ms"
    if round(seconds, 1) < 60:
        return f"{sign}{round(seconds, 1):g} s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{sign}{minutes} min" + (f" {secs} s" if secs else "")
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{sign}{hours} h" + (f" {minutes} min" if minutes else "")
    days, hours = divmod(hours, 24)
    return f"{sign}{days} d" + (f" {hours} h" if hours else "")


def relative(delta: float) -> str:
    """A moment `delta` seconds from now: ``in 58 min 47 s``, ``3 min ago``."""
    return f"in {duration(delta)}" if delta > 0 else f"{duration(-delta)} ago"


def plural(count: int, noun: str) -> str:
    """``1 job``, ``3 jobs``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"
