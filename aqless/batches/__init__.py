"""Batches: N jobs tracked as one, with callback jobs when they are all done.

``await client.batches.put([(queue, PutRequest), ...], on_success=..., on_complete=...,
on_death=...)`` puts the members and the batch in one script call (``batch.put``); every
member carries the batch's id in its job hash (the field ``batch``, which other qless
clients ignore). The script counts each member's end once, as it ends (complete: done;
failed for good or cancelled: failed), and puts each callback job once, when its condition
is met: on_death at the first failed member, on_success when every member completed,
on_complete when none is pending. A callback's data is its own (a JSON object) with the
key ``batch`` added: the batch's id, the event and its totals. ``client.batches.get(bid)``
reads the live totals. A finished batch's record expires `ttl` seconds after it finished
(a day by default). See docs/guides/batches.md.
"""

from aqless.batches.client import Batches
from aqless.batches.model import (
    DEFAULT_TTL,
    MEMBER_LIMIT,
    Batch,
    BatchCallback,
    BatchMember,
    BatchPage,
    CallbackState,
)

__all__ = [
    "DEFAULT_TTL",
    "MEMBER_LIMIT",
    "Batch",
    "BatchCallback",
    "BatchMember",
    "BatchPage",
    "Batches",
    "CallbackState",
]
