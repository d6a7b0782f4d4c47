"""Long operations in chunks sized by what each one cost, so that no call holds the server
much longer than `Pacer.target`: the server runs one script at a time, so a chunk of 500
cancels (about 100 ms) would stall every other client's calls for as long."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Final, TypeVar

T = TypeVar("T")

#: What one call may hold the server, about (seconds).
TARGET: Final = 0.005


@dataclass
class Pacer:
    """The size of the next chunk: from `first`, scaled after each call towards the size
    that takes `target` seconds (at most doubling at once), between `least` and `most`.
    A call's time is measured at the client, so it also counts the way there and back: the
    chunks only come out smaller for it."""

    first: int = 50
    least: int = 1
    most: int = 500
    target: float = TARGET
    clock: Callable[[], float] = time.perf_counter

    def __post_init__(self) -> None:
        self.size = self.first

    def took(self, items: int, seconds: float) -> None:
        """A call of `items` took `seconds`: the next chunk's size follows."""
        if items <= 0:
            return
        fitting = items * self.target / max(seconds, 1e-6)
        self.size = int(max(self.least, min(self.most, 2 * items, fitting)))

    @asynccontextmanager
    async def timed(self, items: int) -> AsyncIterator[None]:
        """Times the call made inside the block, a call of `items`."""
        start = self.clock()
        yield
        self.took(items, self.clock() - start)

    async def each(self, items: Sequence[T]) -> AsyncIterator[list[T]]:
        """`items` in chunks, each sized after the previous one's call (the caller makes
        its call before asking for the next chunk)."""
        start = 0
        while start < len(items):
            chunk = list(items[start : start + self.size])
            began = self.clock()
            yield chunk
            self.took(len(chunk), self.clock() - began)
            start += len(chunk)
