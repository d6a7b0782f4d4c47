"""Encoding many payloads on two threads: this one and a helper.

python-zstandard compresses without holding the GIL, and compression is most of what a
large payload costs to encode (~130 µs of a 100 KB one where the rest is ~45 µs), so
`Queue.put_many` encodes its requests on this thread and a helper at once, each taking the
next request not taken yet (so both finish together, whatever each one's share of the
machine): where a second core is free (the server is idle while a put_many encodes, since
nothing is sent before the end), one request's compression runs beside another's. The
encode of 100 KB puts measured 1.69x one thread's rate on a 2-core machine at load average
1.6, 0.9x to 1.1x at 8 to 15 (benchmarks/HISTORY.md, "100 KB put_many with compression: the
client's encode"). Only from `SPLIT_FROM` puts whose first put's arguments are at least
`SPLIT_BYTES`, and only for a chain that compresses and neither seals nor stores (a key
ring's cipher and a store given by the application are not known to be safe on two
threads). The helper runs in the caller's context (contextvars). Everything is still
encoded before anything is sent, and the first failure in the order of the requests is
raised.
"""

from __future__ import annotations

import contextvars
import itertools
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from typing import TYPE_CHECKING, TypeVar, cast

if TYPE_CHECKING:
    from aqless.codecs.envelope import PayloadCodec

__all__ = ["SPLIT_BYTES", "SPLIT_FROM", "map_split", "splits"]

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
