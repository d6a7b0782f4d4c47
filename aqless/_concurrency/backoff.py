"""The wait before trying again after failures in a row: one rule for every reconnect,
resend and respawn in aqless. It doubles with each failure up to a cap, and is jittered (a
random share between half and all of it) so that a fleet which lost its server together
does not come back in lockstep."""

from __future__ import annotations

import random
from dataclasses import dataclass

__all__ = [
    "HEARTBEAT",
    "OUTCOME",
    "POP",
    "RESPAWN",
    "SPOOL",
    "START",
    "SUBSCRIBE",
    "Delays",
    "apart",
]


@dataclass(frozen=True, slots=True)
class Delays:
    """Waits that start at `first` seconds and double up to `cap`."""

    first: float
    cap: float

    def after(self, failures: int) -> float:
        """The wait after `failures` failures in a row (none after none)."""
        if failures <= 0:
            return 0.0
        ceiling = min(self.first * 2.0 ** min(failures - 1, 64), self.cap)
        return ceiling * random.uniform(0.5, 1.0)  # noqa: S311 - spreading waits, not secrets


def apart(interval: float) -> float:
    """A random share between three quarters and all of `interval`, for an idle worker's ticks (its
    poll, its offer's renewal): the workers of a fleet started together drift apart instead
    of reaching the server in one burst every interval, which a put would wait behind."""
    return interval * random.uniform(0.75, 1.0)  # noqa: S311 - spreading waits, not secrets


POP = Delays(0.1, 5.0)  # the worker's pop found no server
SUBSCRIBE = Delays(0.2, 5.0)  # a subscription (put events, pushes) dropped
HEARTBEAT = Delays(0.2, 2.0)  # a heartbeat got no reply: the lock is running out
OUTCOME = Delays(0.1, 2.0)  # a job's outcome did not land: resent until it does
RESPAWN = Delays(1.0, 30.0)  # a supervised worker process died young
START = Delays(0.5, 10.0)  # a starting worker found no server (aqless-run --wait-for-server)
SPOOL = Delays(0.1, 2.0)  # a spool's flush found no server (aqless.spool)
