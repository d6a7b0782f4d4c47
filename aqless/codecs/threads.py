"""Encoding many payloads on two threads: this one and a helper.

python-zstandard compresses without holding the GIL, and compression is most of what a
large payload costs to encode (~130 µs of a 100 KB one where the rest is ~45 µs), so
`Queue.put_many` encodes its requests on this thread and a helper at once, each taking the
next not taken yet (so both finish together, whatever each one's share of the machine),
where a second core is free one request's compression runs beside another's. Only for a
chain that compresses and neither seals nor stores (a key ring's cipher and a store given by
the application are not known to be safe on two threads), and only from `SPLIT_FROM` puts
whose first put's stored data is at least `SPLIT_BYTES`. Two ways:

- `map_split`: everything encoded before anything is sent (a durable put_many; data that
  could fail to encode); the first failure in the order of the requests is raised.
- `Groups`: data that cannot fail to encode (JSON's own types, as msgspec writes them) left
  out of the checks made before anything is sent, then encoded in groups, in order, by both
  threads, while the caller sends the round trips of the groups done: the compression runs
  beside the server's work, not before it (benchmarks/HISTORY.md, "put_many: the next round
  trip beside the server's work").

The helper runs in the caller's context (contextvars).
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from typing import TYPE_CHECKING, Generic, TypeVar, cast

if TYPE_CHECKING:
    from aqless.codecs.envelope import PayloadCodec

__all__ = ["SPLIT_BYTES", "SPLIT_FROM", "Groups", "map_split", "splits"]

#: the fewest items worth a helper thread
SPLIT_FROM = 4
#: the fewest bytes of the first item's encoding worth a helper thread: a smaller envelope
#: compressed in less than ~15 us, little beside waking a thread
SPLIT_BYTES = 4096

Item = TypeVar("Item")
Done = TypeVar("Done")

_helper: tuple[int, ThreadPoolExecutor] | None = None


def splits(codec: PayloadCodec | None) -> bool:
    """Whether `codec`'s encoding may run on two threads (see above)."""
    return (
        codec is not None
        and codec.compression is not None
        and codec.keys is None
        and codec.store is None
    )


def map_split(
    encode: Callable[[Item], Done],
    items: Sequence[Item],
    size: Callable[[Done], int],
    codec: PayloadCodec | None,
) -> list[Done]:
    """``[encode(item) for item in items]`` (encoding through `codec`), on this thread and
    the helper at once when the codec and the first item's `size` say it pays (see above)."""
    if len(items) < SPLIT_FROM or not splits(codec):
        return [encode(item) for item in items]
    first = encode(items[0])
    if size(first) < SPLIT_BYTES:
        return [first, *(encode(item) for item in items[1:])]
    done: list[Done | None] = [first, *([None] * (len(items) - 1))]
    failed: dict[int, BaseException] = {}
    taken = itertools.count(1)  # each item's index is taken by one thread: next() is atomic

    def work() -> None:
        while not failed and (index := next(taken)) < len(items):
            try:
                done[index] = encode(items[index])
            except BaseException as error:  # raised below, the first in order
                failed[index] = error

    # in the caller's context: a class's default options or a typed handler may read it
    helper = _pool().submit(contextvars.copy_context().run, work)
    try:
        work()
    finally:
        wait([helper])  # the helper's items end before anything is raised
    if failed:  # every item before the first failure was taken, so done or failed too
        raise failed[min(failed)]
    return cast(list[Done], done)


def _pool() -> ThreadPoolExecutor:
    """The helper thread, made again in a forked child (whose copy has no thread)."""
    global _helper
    if _helper is None or _helper[0] != os.getpid():
        _helper = (os.getpid(), ThreadPoolExecutor(1, thread_name_prefix="aqless-encode"))
    return _helper[1]


class Groups(Generic[Item]):
    """`items` encoded by `encode` in groups of `size`, in order, by this thread
    (`take`) and the helper thread at once, each taking the next group not taken: so that
    the caller can send the groups done while the rest are encoded. `ready` says how many
    items are encoded from the first; `changed` waits for the helper's next group. The
    helper runs in the caller's context (contextvars)."""

    def __init__(self, items: Sequence[Item], encode: Callable[[Item], object], size: int) -> None:
        self._items = items
        self._encode = encode
        self._bounds = [
            (start, min(start + size, len(items))) for start in range(0, len(items), size)
        ]
        self._done = [False] * len(self._bounds)
        self._failed: dict[int, BaseException] = {}
        self._taken = itertools.count()  # next() is atomic: each group goes to one thread
        self._prefix = 0  # groups done from the first
        self._stopped = False
        self._loop = asyncio.get_running_loop()
        self._changed = asyncio.Event()
        self._helper = _pool().submit(contextvars.copy_context().run, self._help)

    def _help(self) -> None:
        while self._run_one():
            self._loop.call_soon_threadsafe(self._changed.set)

    def _run_one(self) -> bool:
        """Encodes the next group not taken; False when none is left (or a group failed)."""
        if self._stopped or self._failed:
            return False
        group = next(self._taken)
        if group >= len(self._bounds):
            return False
        start, stop = self._bounds[group]
        try:
            for index in range(start, stop):
                self._encode(self._items[index])
        except BaseException as error:  # raised by `ready`, in order
            self._failed[group] = error
        self._done[group] = True
        return True

    def take(self) -> bool:
        """This thread encodes the next group not taken; False when none is left."""
        return self._run_one()

    def ready(self) -> int:
        """How many items are encoded from the first; the error of a group that failed,
        once every group before it is done."""
        bounds = self._bounds
        while self._prefix < len(bounds) and self._done[self._prefix]:
            if self._prefix in self._failed:
                raise self._failed[self._prefix]
            self._prefix += 1
        return bounds[self._prefix - 1][1] if self._prefix else 0

    @property
    def helping(self) -> bool:
        """Whether the helper may still finish a group."""
        return not self._helper.done()

    async def changed(self) -> None:
        """Waits for the helper to finish a group (at once when it has stopped)."""
        if self.helping:
            self._changed.clear()
            await self._changed.wait()

    def stop(self) -> None:
        """No thread takes another group (the caller ended early: a failure, cancelled)."""
        self._stopped = True
