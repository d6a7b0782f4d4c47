"""The M/M/c queue (Erlang C): how long jobs wait for one of `c` slots.

Jobs arrive at random (a Poisson process of rate `arrival_rate` per second), each holds a
slot for a random time (exponential, of mean `service_time` seconds), and `slots` slots take
them first come, first served. Then a job waits at all with the Erlang C probability, and a
job that waits does so for an exponential time of rate ``slots / service_time -
arrival_rate``.
"""

from __future__ import annotations

import math
from typing import Final

from aqless.errors import InvalidArgumentError

__all__ = ["MOST_SLOTS", "erlang_c", "slots_for", "wait_quantile"]

MOST_SLOTS: Final = 100_000
"""`slots_for` looks no further than this many slots."""


def erlang_c(slots: int, load: float) -> float:
    """The probability that a job waits, with `slots` slots and `load` erlangs offered
    (arrival rate times mean service time); 1 when the slots cannot keep up."""
    if slots < 1:
        raise InvalidArgumentError("scaling", f"slots must be at least 1, got {slots!r}")
    if not load >= 0 or math.isinf(load):
        raise InvalidArgumentError("scaling", f"load must be a finite number >= 0, got {load!r}")
    if load == 0:
        return 0.0
    if load >= slots:
        return 1.0
    # Erlang B by its recursion (no factorials, no overflow), then C from B
    blocking = 1.0
    for k in range(1, slots + 1):
        blocking = load * blocking / (k + load * blocking)
    return slots * blocking / (slots - load * (1 - blocking))


def wait_quantile(
    slots: int, arrival_rate: float, service_time: float, quantile: float = 0.95
) -> float:
    """The `quantile` of the wait (seconds) in an M/M/c queue; infinite when the slots
    cannot keep up (``arrival_rate * service_time >= slots``)."""
    _check_rates(arrival_rate, service_time)
    if not 0 < quantile < 1:
        raise InvalidArgumentError("scaling", f"quantile must be in (0, 1), got {quantile!r}")
    load = arrival_rate * service_time
    if load >= slots:
        return math.inf
    waits = erlang_c(slots, load)
    beyond = 1 - quantile
    if waits <= beyond:
        return 0.0
    # P(wait > t) = C * exp(-(slots / service_time - arrival_rate) * t)
    return math.log(waits / beyond) / (slots / service_time - arrival_rate)


def slots_for(
    arrival_rate: float, service_time: float, target: float, quantile: float = 0.95
) -> int:
    """The fewest slots whose `quantile` wait is at most `target` seconds (0 when nothing
    arrives); InvalidArgumentError past `MOST_SLOTS`."""
    _check_rates(arrival_rate, service_time)
    if not target >= 0 or math.isinf(target):
        raise InvalidArgumentError(
            "scaling", f"target must be a finite number >= 0, got {target!r}"
        )
    if arrival_rate == 0 or service_time == 0:
        return 0
    slots = max(1, math.floor(arrival_rate * service_time) + 1)  # the fewest that keep up
    while wait_quantile(slots, arrival_rate, service_time, quantile) > target:
        slots += 1
        if slots > MOST_SLOTS:
            raise InvalidArgumentError(
                "scaling", f"more than {MOST_SLOTS} slots would be needed to meet {target} s"
            )
    return slots


def _check_rates(arrival_rate: float, service_time: float) -> None:
    for name, value in (("arrival_rate", arrival_rate), ("service_time", service_time)):
        if not value >= 0 or math.isinf(value):
            raise InvalidArgumentError(
                "scaling", f"{name} must be a finite number >= 0, got {value!r}"
            )
