"""A blocking client's spool (``aqless.sync.Client.spool``): the async `aqless.Spool` on
the client's loop, each verb a blocking call. See docs/guides/outage.md."""

from __future__ import annotations

import os
from typing import Any, Unpack

from aqless.client import Client as PlainClient
from aqless.puts import JobClass, PutOptions
from aqless.spool import PutReceipt, Spool, SpoolStats
from aqless.sync.runtime import BlockingClient


class SyncSpool:
    """A producer's spool for a blocking client: `put` blocks until the job is queued or
    kept (as ``aqless.Spool.put``). The spool lives on the client's loop and flushes
    there, started and stopped with the client. In a process forked after the spool was
    made (a pre-forking server's workers), the spool is made again, empty, for the new
    process: give a file spool a path per process. ``aqless.sync.Client.spool`` makes one.

    Examples:
        ```python
        client = aqless.sync.Client()
        spool = client.spool(path="/var/lib/app/puts-{pid}.spool")


        def order_placed(order_id: int) -> str:
            receipt = spool.put("receipts", "app.jobs.SendReceipt", {"order": order_id})
            return "queued" if receipt.queued else "accepted, sent when the queue is back"
        ```
    """

    def __init__(self, client: BlockingClient[PlainClient], settings: dict[str, Any]) -> None:
        self._client = client
        self._settings = settings
        self._made: tuple[int, Spool] | None = None  # the spool of this process's loop
        self._spool_of(None)  # made now: its settings and file are checked at the call

    def _spool_of(self, client: PlainClient | None) -> Spool:
        if self._made is not None and self._made[0] == os.getpid():
            return self._made[1]

        async def made(loop_client: PlainClient) -> Spool:
            return loop_client.spool(**self._settings)

        spool = self._client.call(made) if client is None else client.spool(**self._settings)
        self._made = (os.getpid(), spool)
        return spool

    def put(
        self, queue: str, klass: JobClass, data: Any = None, **options: Unpack[PutOptions]
    ) -> PutReceipt:
        """Put a job, or keep it in the spool (see ``aqless.Spool.put``, which takes the
        same arguments and raises the same errors: SpoolFullError, the spool full while
        the server is away; ServerFullError; bad input's InvalidArgumentError).

        Examples:
            ```python
            receipt = spool.put("receipts", "app.jobs.SendReceipt", {"order": 7}, priority=5)
            ```
        """
        return self._client.call(
            lambda client: self._spool_of(client).put(queue, klass, data, **options)
        )

    def flush(self, *, timeout: float | None = None) -> int:
        """Send the spool's puts now (see ``aqless.Spool.flush``) and return how many the
        server answered: ConnectionLostError when it cannot be reached. TimeoutError after
        `timeout` seconds (default None: no limit): this flush stops, and the client's own
        task goes on sending what waits.

        Examples:
            ```python
            spool.flush(timeout=10.0)  # before a planned exit: leave nothing behind
            ```
        """
        return self._client.call(lambda client: self._spool_of(client).flush(), timeout=timeout)

    @property
    def depth(self) -> int:
        """How many puts wait in the spool now."""
        return self.stats().depth

    def stats(self) -> SpoolStats:
        """The spool's figures (see ``aqless.SpoolStats``); reads no server.

        Examples:
            ```python
            print(f"{spool.stats().depth} puts wait for the server")
            ```
        """

        async def read(client: PlainClient) -> SpoolStats:
            return self._spool_of(client).stats()

        return self._client.call(read)
