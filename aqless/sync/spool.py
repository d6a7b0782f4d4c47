"""A blocking client's spool (``aqless.sync.Client.spool``, and
``aqless.sync.ShardedClient.spool``'s `SyncShardedSpool`): the async `aqless.Spool` (or
`aqless.ShardedSpool`) on the client's loop, each verb a blocking call. See
docs/guides/outage.md."""

from __future__ import annotations

import os
from typing import Any, Generic, TypeVar, Unpack, cast

from aqless.client import Client as PlainClient
from aqless.puts import JobClass, PutOptions
from aqless.sharding.client import ShardedClient
from aqless.sharding.spool import ShardedSpool
from aqless.spool import PutReceipt, Spool, SpoolStats
from aqless.sync.runtime import BlockingClient

#: the async client a blocking spool's spool is made by
A = TypeVar("A", PlainClient, ShardedClient)


class SyncSpool(Generic[A]):
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

    def __init__(self, client: BlockingClient[A], settings: dict[str, Any]) -> None:
        self._client: BlockingClient[A] = client
        self._settings = settings
        self._made: tuple[int, Spool] | None = None  # the spool of this process's loop
        self._spool_of(None)  # made now: its settings and file are checked at the call

    def _spool_of(self, client: A | None) -> Spool:
        if self._made is not None and self._made[0] == os.getpid():
            return self._made[1]

        async def made(loop_client: A) -> Spool:
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

        async def read(client: A) -> SpoolStats:
            return self._spool_of(client).stats()

        return self._client.call(read)


class SyncShardedSpool(SyncSpool[ShardedClient]):
    """A blocking sharded client's spool: `put` places the put on its shard and blocks
    until it is queued there or kept for that shard (as ``aqless.ShardedSpool.put``);
    ``aqless.sync.ShardedClient.spool`` makes one. Otherwise as `SyncSpool`.

    Examples:
        ```python
        client = aqless.sync.ShardedClient("redis+cluster://node-1:7000", deployment="billing")
        spool = client.spool(path="/var/lib/app/puts-{pid}.spool")
        receipt = spool.put("invoices", "billing.Invoice", {"id": 7}, route="customer-42")
        ```
    """

    def put(
        self,
        queue: str,
        klass: JobClass,
        data: Any = None,
        *,
        route: str | None = None,
        **options: Unpack[PutOptions],
    ) -> PutReceipt:
        """Place the put and put it, or keep it for its shard (see
        ``aqless.ShardedSpool.put``, which takes the same arguments and raises the same
        errors: SpoolFullError, ServerFullError, CrossShardError, bad input's
        InvalidArgumentError).

        Examples:
            ```python
            receipt = spool.put("invoices", "billing.Invoice", {"id": 7}, route="customer-42")
            ```
        """

        async def put(client: ShardedClient) -> PutReceipt:
            spool = cast(ShardedSpool, self._spool_of(client))  # a ShardedClient made it
            return await spool.put(queue, klass, data, route=route, **options)

        return self._client.call(put)
