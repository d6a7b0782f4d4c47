"""Batches of a sharded deployment: a batch and all its members live on one shard, the owner
of the batch id's bucket, so that the script counts them atomically there.

The shard is the one the members name (a pinned queue, dependencies, throttles, rate limits:
aqless.sharding.placement), else the owner of a new random id; members naming two shards, or
a given jid or batch id whose bucket another shard owns, are a CrossShardError before
anything is written. Members without a jid get one on that shard."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from inspect import BoundArguments
from typing import Any, cast

from aqless._concurrency.routing import PutTargets, ShardedPart, paged, routed
from aqless.batches.client import Batches
from aqless.batches.model import (
    COMMAND,
    DEFAULT_TTL,
    Batch,
    BatchCallback,
    BatchMember,
    BatchPage,
    checked_members,
)
from aqless.errors import CrossShardError
from aqless.puts import default_options

__all__ = ["ShardedBatches"]


def _newest(parts: Sequence[BatchPage], arguments: BoundArguments) -> BatchPage:
    """The batches of every shard, newest first, a page at a time."""
    offset, count = arguments.arguments["offset"], arguments.arguments["count"]
    batches = sorted(
        (batch for page in parts for batch in page.batches),
        key=lambda batch: batch.created,
        reverse=True,
    )
    return BatchPage(sum(page.total for page in parts), batches[offset : offset + count])


class ShardedBatches(ShardedPart):
    """``client.batches`` of a sharded deployment: each batch on one shard."""

    async def _named(self, members: list[BatchMember]) -> dict[str, int]:
        """What the members name that lives on one shard, and that shard."""
        shard_map = await self._client.current_map()
        named: dict[str, int] = {}
        for queue, request in members:
            defaults = default_options(request.klass, request.data)
            options = {**defaults, **request.options()}
            targets = PutTargets(
                queue=queue,
                dependencies={
                    jid: await self._client.shard_of_jid(jid)
                    for jid in options.get("depends") or ()
                },
                throttles=options.get("throttles") or (),
                rate_limits=options.get("rate_limits") or (),
            )
            named.update(shard_map.named(targets))
        return named

    async def put(
        self,
        members: Iterable[BatchMember],
        *,
        on_success: BatchCallback | None = None,
        on_complete: BatchCallback | None = None,
        on_death: BatchCallback | None = None,
        description: str = "",
        ttl: float = DEFAULT_TTL,
        bid: str | None = None,
    ) -> str:
        """`Batches.put` on one shard (see the module's documentation).

        Raises:
            CrossShardError: the members name different shards, or a given jid or `bid`
                belongs to another shard than theirs (nothing is put).
        """
        listed = checked_members(members)
        named = await self._named(listed)
        if bid:
            named[f"batch {bid!r}"] = self._client.shard_of(bid)
        for _, request in listed:
            if request.jid:
                named[f"jid {request.jid!r}"] = self._client.shard_of(request.jid)
        if len(set(named.values())) > 1:
            detail = ", ".join(f"{what} on shard {shard}" for what, shard in named.items())
            raise CrossShardError(
                COMMAND, f"a batch lives on one shard, but its {detail}; nothing was put"
            )
        shard = next(iter(named.values()), None)
        bid = bid or self._client.new_jid(shard)
        shard = self._client.shard_of(bid) if shard is None else shard
        placed = [
            (queue, request if request.jid else replace(request, jid=self._client.new_jid(shard)))
            for queue, request in listed
        ]
        return await self._part(self._client.shard(shard)).put(
            placed,
            on_success=on_success,
            on_complete=on_complete,
            on_death=on_death,
            description=description,
            ttl=ttl,
            bid=bid,
        )

    async def get(self, bid: str) -> Batch | None:
        """The batch's record, from the shards its id's bucket names."""
        for shard in (await self._client.current_map()).candidates(bid):
            found = await self._part(self._client.shard(shard)).get(bid)
            if found is not None:
                return found
        return None

    def _part(self, client: Any) -> Batches:
        return cast(Batches, client.batches)

    recent = routed(Batches.recent, paged("batch.list"), _newest)
