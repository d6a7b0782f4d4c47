"""A worker's server going away and coming back, said in a few lines however long it lasts.

While the server is unavailable, every part of a worker that calls it (pops, heartbeats,
outcomes, put-event subscriptions) fails and tries again on its own backoff: each failure,
with the wait before the next attempt, is logged at debug level by the part itself. The
worker's `ServerOutage` turns them into three kinds of warning: one when the first call
fails, a reminder at most every `remind_every` seconds while calls go on failing (how long
the server has been down, how many attempts failed), and one when a call succeeds again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

__all__ = ["REMIND_EVERY", "ServerOutage", "reason"]

logger = logging.getLogger(__name__)

#: Seconds between two reminders that the server is still down.
REMIND_EVERY = 30.0


def reason(error: BaseException | str) -> str:
    """What went wrong, in the words of the layer that saw it (the socket, the server)
    rather than with the name of the protocol call that met it."""
    if isinstance(error, str):
        return error
    cause = error.__cause__
    text = str(cause if cause is not None else error).strip()
    return text or type(error).__name__  # a timeout may say nothing


class ServerOutage:
    """Whether one worker's server answers, as its calls tell.

    Args:
        worker: the worker's name, for the log lines.
        remind_every: seconds between two reminders while the server stays down.
        clock: the monotonic clock (seconds).
    """

    def __init__(
        self,
        worker: str,
        *,
        remind_every: float = REMIND_EVERY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.worker = worker
        self.remind_every = remind_every
        self._clock = clock
        self.down_since: float | None = None
        self.failures = 0  # calls failed since the server went down
        self._said_at = 0.0  # when the last line about this outage was logged

    @property
    def down(self) -> bool:
        return self.down_since is not None

    def failed(self, error: BaseException | str) -> None:
        """A call found no server: `error` (a ConnectionLostError, the transport's own
        error, or what happened in words)."""
        now = self._clock()
        self.failures += 1
        if self.down_since is None:
            self.down_since = self._said_at = now
            logger.warning(
                "worker %s: the server is unavailable (%s); its calls are retried, a "
                "reminder every %g s",
                self.worker,
                reason(error),
                self.remind_every,
            )
        elif now - self._said_at >= self.remind_every:
            self._said_at = now
            logger.warning(
                "worker %s: the server has been unavailable for %.0f s (%d attempts failed; "
                "last: %s)",
                self.worker,
                now - self.down_since,
                self.failures,
                reason(error),
            )

    def answered(self) -> None:
        """A call reached the server."""
        if self.down_since is None:
            return
        logger.warning(
            "worker %s: the server is available again, after %.1f s down (%d attempts failed)",
            self.worker,
            self._clock() - self.down_since,
            self.failures,
        )
        self.down_since = None
        self.failures = 0
