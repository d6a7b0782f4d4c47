"""Big job data read beside the pop: the pop's counterpart of a staged put.

A pop hands each job's data to the worker through the script: the server makes the stored
text a Lua string (hashed whole, then copied) and copies it again into the reply, ~545k
instructions more for 100 KB of data than for 100 B, where a plain HMGET of it costs ~110k
(benchmarks/HISTORY.md). So a worker whose last jobs from a queue had data of
``BESIDE_BYTES`` or more pops that queue with ``DATA_BESIDE``: the script leaves every job's
data out of its reply (None in the job's fields), and the worker reads them with plain
HMGETs (``data`` and ``jid``, which tells a job that is gone), sent together in one round
trip. A queue whose jobs have small data is popped as before: its jobs pay nothing for this,
and a queue whose jobs' data is small again goes back to it at its next pop.

A job whose hash is gone by the read (cancelled, or completed by an operator, between the
pop and the read) is not run: it is no longer there to run.
"""

from __future__ import annotations

import logging
from typing import Any

from aqless._connection.protocol import BESIDE_BYTES, DATA_APART_NO_HISTORY, DATA_BESIDE
from aqless.client import Client

__all__ = ["BesideData"]

logger = logging.getLogger(__name__)


class BesideData:
    """Which queues a worker pops with ``DATA_BESIDE``, and the reads of the data left out."""

    __slots__ = ("_big", "_client")

    def __init__(self, client: Client) -> None:
        self._client = client
        self._big: set[str] = set()  # queues whose last jobs had big data

    def option(self, queue: str) -> str:
        """The pop option for `queue`: ``DATA_BESIDE`` while its jobs have big data."""
        return DATA_BESIDE if queue in self._big else DATA_APART_NO_HISTORY

    async def read(self, queue: str, popped: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """`popped` (a pop's job fields) with the data the pop left out read in; a job
        that is gone is left out. `queue` learns whether its jobs have big data."""
        left = [fields for fields in popped if fields.get("data") is None]
        gone: list[str] = []
        if left:
            protocol = self._client.protocol
            calls = [("HMGET", f"{protocol.prefix}j:{job['jid']}", "data", "jid") for job in left]
            replies = await protocol.plain_many("HMGET", calls)
            for fields, (data, jid) in zip(left, replies, strict=True):
                if jid is None:
                    gone.append(str(fields.get("jid")))
                fields["data"] = "{}" if data is None else _text(data)  # (as the pop: {})
        if popped and queue:
            big = any(len(fields["data"]) >= BESIDE_BYTES for fields in popped)
            (self._big.add if big else self._big.discard)(queue)
        if not gone:
            return popped
        logger.info("jobs %s are gone since their pop: not run", ", ".join(gone))
        return [fields for fields in popped if str(fields.get("jid")) not in gone]


def _text(data: str | bytes) -> str:
    return data.decode() if isinstance(data, bytes) else data
