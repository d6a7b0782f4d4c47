"""Readings kept over a window, so that each new one's throughput covers the recent past."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from typing import Protocol

from aqless.errors import InvalidArgumentError
from aqless.scaling.estimate import QueueScaling

__all__ = ["ScalingWindow"]


class _AllQueues(Protocol):
    async def scaling(self, target_p95: float) -> Sequence[QueueScaling]: ...


class ScalingWindow:
    """Keeps each queue's recent readings so that a new reading's throughput is taken over
    about the last `window` seconds (from the newest kept reading at least that old, or the
    oldest one kept): the long-lived reader's way (a metrics watcher, an autoscaler's
    endpoint).

    Args:
        window: seconds the throughput is taken over (default 60.0).

    Raises:
        InvalidArgumentError: a `window` that is not a positive finite number.

    Examples:
        ```python
        window = aqless.ScalingWindow(120.0)
        while True:
            for reading in await window.read(client.queues, target_p95=2.0):
                print(reading.queue, reading.slots)
            await asyncio.sleep(15)
        ```
    """

    def __init__(self, window: float = 60.0) -> None:
        if not 0 < window < math.inf:
            raise InvalidArgumentError("scaling", f"window must be positive, got {window!r}")
        self.window = window
        self._readings: dict[str, deque[QueueScaling]] = {}

    def update(self, reading: QueueScaling) -> QueueScaling:
        """`reading` taken over the window (see `QueueScaling.since`); kept for later
        readings.

        Examples:
            ```python
            reading = window.update(await client.queues["emails"].scaling(2.0))
            ```
        """
        kept = self._readings.setdefault(reading.queue, deque())
        while kept and kept[-1].at >= reading.at:  # a clock that went back: start over
            kept.pop()
        reference = None
        for earlier in kept:
            if earlier.at <= reading.at - self.window or reference is None:
                reference = earlier
        rebased = reading.since(reference) if reference is not None else reading
        kept.append(reading)
        while len(kept) > 1 and kept[1].at <= reading.at - self.window:
            kept.popleft()  # the newest reading at least a window old stays
        return rebased

    async def read(self, queues: _AllQueues, target_p95: float) -> list[QueueScaling]:
        """Every queue's scaling signals (``client.queues.scaling``), each over the window.

        Args:
            queues: ``client.queues`` (or a sharded client's).
            target_p95: the p95 wait, in seconds, the slots are worked out for.

        Raises:
            InvalidValueError: a `target_p95` that is not a positive number of seconds.

        Examples:
            ```python
            readings = await window.read(client.queues, target_p95=2.0)
            ```
        """
        return [self.update(reading) for reading in await queues.scaling(target_p95)]

    def forget(self, queue: str) -> None:
        """Drop the readings kept for `queue` (e.g. a queue that was deleted).

        Examples:
            ```python
            window.forget("emails")
            ```
        """
        self._readings.pop(queue, None)
