"""`ShardedSpool`: a sharded deployment's spool (reliable push), the `aqless.Spool` with each
put placed at the call as ``ShardedQueue.put`` places it, then sent to, or kept for, that
shard. One spool (one capacity, one file) holds every shard's puts; each shard's are sent in
the order they were made, and a shard away holds back only its own: puts placed on the
other shards go straight to them.

A kept put remembers the shard it was placed on, and is sent there, while the shard map
still names that shard (active or draining: a draining shard's jobs are still worked). A
put whose shard was forgotten meanwhile is sent to the shard its jid's bucket belongs to
now (as a lookup of the jid would find it)."""

from __future__ import annotations

import logging
import os
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Unpack, cast

from aqless.errors import ClientClosedError, ConnectionLostError, ServerFullError
from aqless.puts import JobClass, PutOptions, PutRequest, inside_hooks
from aqless.sharding.queue import ShardedQueue
from aqless.spool import PutReceipt, Spool
from aqless.spool.entries import SpooledPut

if TYPE_CHECKING:
    from aqless.client import Client
    from aqless.contracts import ScriptClient
    from aqless.sharding.deployment import Deployment as ShardedClient

__all__ = ["ShardedSpool"]

logger = logging.getLogger(__name__)


class ShardedSpool(Spool):
    """A `aqless.Spool` for a `aqless.ShardedClient`'s puts (see the module's text);
    ``sharded_client.spool(...)`` makes one, with the same settings, and its flushing task
    starts and stops with the client.

    Raises:
        InvalidValueError: a setting outside its rule (see `aqless.Spool`).
        ConfigurationError: the file at `path` is in use by another process's spool, or
            damaged.

    Examples:
        ```python
        async with aqless.ShardedClient(nodes, deployment="billing") as client:
            spool = client.spool(path="/var/lib/app/puts-{pid}.spool")
            receipt = await spool.put("invoices", "billing.Invoice", {"id": 7})
        ```
    """

    def __init__(
        self,
        client: ShardedClient,
        *,
        capacity: int = 10_000,
        path: str | os.PathLike[str] | None = None,
        dedup_ttl: float = 86_400.0,
        batch: int = 500,
    ) -> None:
        # the base reads only the clock, codec and worker name of the client it is given;
        # what it sends goes through `_client_of`, a shard's plain client
        super().__init__(
            cast("ScriptClient", client),
            capacity=capacity,
            path=path,
            dedup_ttl=dedup_ttl,
            batch=batch,
        )
        self._sharded = client

    def __repr__(self) -> str:
        return f"<ShardedSpool {self.name} {self.depth}/{self.capacity}>"

    def _client_of(self, shard: int | None) -> Client:
        if shard is None:  # not reached: every put of this spool is placed
            shard = self._sharded.shards.active[0].id
        return self._sharded.shard(shard)

    async def put(
        self,
        queue: str,
        klass: JobClass,
        data: Any = None,
        *,
        route: str | None = None,
        **options: Unpack[PutOptions],
    ) -> PutReceipt:
        """Place the put on its shard (as ``ShardedQueue.put``, with the same options and
        `route`), then put it there, or, when that shard cannot be reached or puts for it
        wait in the spool, keep it (see ``aqless.Spool.put``). The client's `put_hooks`
        wrap it once, before it is placed.

        Raises:
            ClientClosedError: the spool (or its client) was closed.
            SpoolFullError: the shard away and the spool holding `capacity` puts.
            ServerFullError: the shard answered that it is out of memory or cannot
                persist: not spooled.
            CrossShardError: what the put names lives on different shards (nothing put
                nor kept).
            InvalidArgumentError: bad input, refused before anything is sent or kept.

        Examples:
            ```python
            receipt = await spool.put("invoices", "billing.Invoice", {"id": 7}, route="customer-42")
            status = 201 if receipt.queued else 202
            ```
        """
        if self._closed:
            raise ClientClosedError("this spool's client is closed; make a new one")
        self.start()
        sharded_queue = ShardedQueue(self._sharded, queue)
        receipts: list[PutReceipt] = []

        async def send(requests: list[PutRequest]) -> list[str]:
            (one,) = requests
            shard, placed = await sharded_queue._placed(one, route)
            chosen = self._deduplicated(placed.options(), placed.jid or "")
            if not self._store.waiting(shard):  # none of its shard's puts wait ahead of it
                try:
                    result = (
                        await self._client_of(shard)
                        .queues[queue]
                        .put_result(placed.klass, placed.data, **chosen)
                    )
                    receipts.append(PutReceipt(result.jid, False, result.deduplicated))
                    return [result.jid]
                except ServerFullError:
                    raise
                except ConnectionLostError as error:
                    logger.debug("spooling %s for shard %s: %s", placed.jid, shard, error)
            kept = PutRequest(placed.klass, placed.data, **chosen)
            receipts.append(PutReceipt(await self._keep(queue, kept, shard), spooled=True))
            return [receipts[-1].jid]

        request = PutRequest(klass, data, **options)
        (jid,) = await inside_hooks(self._sharded.put_hooks, sharded_queue, send)([request])
        return receipts[-1] if receipts else PutReceipt(jid, spooled=False)

    async def _send_share(self, shard: int | None, puts: list[SpooledPut]) -> int:
        named = {known.id for known in self._sharded.shards.shards}
        if shard in named or not puts:
            return await super()._send_share(shard, puts)
        # its shard was forgotten: each put to the shard its jid's bucket belongs to now
        moved = [replace(put, shard=self._sharded.shard_of(put.jid)) for put in puts]
        sent = 0
        for owner in dict.fromkeys(put.shard for put in moved):
            sent += await super()._send_share(owner, [put for put in moved if put.shard == owner])
        return sent
