"""A wake-up signal that is never lost between checking for work and waiting for it.

It uses asyncio's Event rather than anyio's: the worker fires one per job, and anyio's costs
eight times as much to create. (aqless runs on asyncio only; redis.asyncio does.)
"""

from __future__ import annotations

import asyncio


class Wakeup:
    """Wakes whoever waits on it. Take ``pulse.event`` *before* checking for work, then wait
    on that event: a ``fire()`` in between is not lost."""

    def __init__(self) -> None:
        self.event = asyncio.Event()

    def fire(self) -> None:
        event, self.event = self.event, asyncio.Event()
        event.set()
