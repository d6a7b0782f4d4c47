"""Big job data read beside the pop: the pop's counterpart of a staged put.

A pop hands each job's data to the worker through the script: the server makes the stored
text a Lua string (hashed whole, then copied) and copies it again into the reply, ~450k
instructions for 100 KB of data, where a plain HGET of it costs ~110k
(benchmarks/HISTORY.md). So a worker whose jobs from a queue had big data pops that queue
with ``DATA_BESIDE``: the script leaves each data of ``BESIDE_BYTES`` or more out of its
reply (None in the job's fields), and the worker reads those with plain HGETs, sent
together in one round trip. Small data comes in the reply as before, and a queue whose jobs
had no big data is popped as before: its jobs pay nothing for this.

A job whose hash is gone by the HGET (cancelled, or completed by an operator, between the
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
        whose data is gone is left out. `queue` learns whether its jobs have big data."""
        left = [fields for fields in popped if fields.get("data") is None]
        if popped and queue:
            big = bool(left) or any(_big(fields["data"]) for fields in popped)
            (self._big.add if big else self._big.discard)(queue)
        if not left:
            return popped
        protocol = self._client.protocol
        calls = [("HGET", f"{protocol.prefix}j:{fields['jid']}", "data") for fields in left]
        gone: list[str] = []
        for fields, data in zip(left, await protocol.plain_many("HGET", calls), strict=True):
            if data is None:
                gone.append(str(fields.get("jid")))
            fields["data"] = data.decode() if isinstance(data, bytes) else data
        if not gone:
            return popped
        logger.info("jobs %s are gone since their pop: not run", ", ".join(gone))
        return [fields for fields in popped if fields["data"] is not None]


def _big(data: object) -> bool:
    return isinstance(data, str | bytes) and len(data) >= BESIDE_BYTES
