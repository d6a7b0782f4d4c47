"""A wake-up signal that is never lost between checking for work and waiting for it."""

from __future__ import annotations

import anyio


class Pulse:
    """Wakes whoever waits on it. Take ``pulse.event`` *before* checking for work, then wait
    on that event: a ``fire()`` in between is not lost."""

    def __init__(self) -> None:
        self.event = anyio.Event()

    def fire(self) -> None:
        event, self.event = self.event, anyio.Event()
        event.set()
