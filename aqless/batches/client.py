"""``client.batches``: put a batch, read one, list them (one server or one shard)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

from aqless import rules
from aqless.batches.model import (
    COMMAND,
    DEFAULT_TTL,
    Batch,
    BatchCallback,
    BatchMember,
    BatchPage,
    callbacks_text,
    checked_members,
    checked_ttl,
)
from aqless.codecs import PayloadCodec
from aqless.errors import InvalidArgumentError
from aqless.puts import new_jid, prepare_put
from aqless.scripts.loader import Argument

if TYPE_CHECKING:
    from aqless._connection.protocol import Clock, ScriptCaller

__all__ = ["BatchClient", "Batches", "batch_arguments"]


class BatchClient(Protocol):
    """What the batches need of a client of one server (aqless.contracts.ScriptClient,
    which names the batches and so is not imported here)."""

    @property
    def protocol(self) -> ScriptCaller: ...
    @property
    def clock(self) -> Clock: ...
    @property
    def worker_name(self) -> str: ...
    @property
    def codec(self) -> PayloadCodec | None: ...


def batch_arguments(
    client: BatchClient,
    bid: str,
    members: list[BatchMember],
    *,
    on_success: BatchCallback | None,
    on_complete: BatchCallback | None,
    on_death: BatchCallback | None,
    description: str,
    ttl: float,
) -> list[Argument]:
    """`batch.put`'s arguments (after `now`), every check made: nothing is sent before."""
    if not bid:
        raise InvalidArgumentError(COMMAND, "a batch id must not be empty")
    callbacks = callbacks_text({"success": on_success, "complete": on_complete, "death": on_death})
    arguments: list[Argument] = [bid, description, checked_ttl(ttl), callbacks, len(members)]
    for queue, request in members:
        prepared = prepare_put(
            request.klass,
            request.data,
            request.options(),
            worker=client.worker_name,
            queue=queue,
            clock=client.clock,
            codec=client.codec,
        )
        arguments += [len(prepared.arguments), *prepared.arguments]
    return arguments


class Batches:
    """A deployment's batches: ``client.batches``.

    Examples:
        ```python
        from aqless import BatchCallback, PutRequest

        bid = await client.batches.put(
            [("images", PutRequest("app.jobs.resize", {"id": n})) for n in range(100)],
            on_complete=BatchCallback("app.jobs.notify", "notifications"),
        )
        batch = await client.batches.get(bid)
        ```
    """

    def __init__(self, client: BatchClient) -> None:
        self._client = client

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
        """Put the members, each a ``(queue, PutRequest)``, as one batch, in one atomic call;
        return the batch's id (`bid`, or a new one).

        The callbacks are jobs put once each by the server: `on_death` when a member first
        fails for good (or is cancelled), `on_success` when every member completed,
        `on_complete` when every member completed or failed.

        Args:
            members: ``(queue, PutRequest)`` pairs, 1 to 10000.
            on_success: put when every member completed (default None).
            on_complete: put when every member completed or failed (default None).
            on_death: put when a member first fails for good (default None).
            description: what the batch is, for people (default ``""``).
            ttl: seconds the record is kept after the last member ended (default 86400,
                a day).
            bid: the batch's id (default None: a new one).

        Returns:
            The batch's id.

        Raises:
            InvalidArgumentError: no member, more than 10000, a member that is not a (queue,
                PutRequest) or asks for dedup, a jid given twice or taken already, a callback
                whose class a worker cannot import; an InvalidValueError (one of them) for a
                member's queue or option outside its rule (aqless.rules); nothing is put.
            PayloadError: a callback's data cannot be encoded as JSON; nothing is put.

        Examples:
            ```python
            bid = await client.batches.put(
                [("emails", PutRequest("app.jobs.send", {"to": a})) for a in addresses],
                on_success=BatchCallback("app.jobs.report", "reports", {"campaign": 7}),
                description="campaign 7",
                ttl=3600,
            )
            ```
        """
        listed = checked_members(members)
        arguments = batch_arguments(
            self._client,
            bid or new_jid(),
            listed,
            on_success=on_success,
            on_complete=on_complete,
            on_death=on_death,
            description=description,
            ttl=ttl,
        )
        return str(await self._client.protocol.call(COMMAND, *arguments))

    async def get(self, bid: str) -> Batch | None:
        """The batch's record and live totals; None when there is none (or it expired).

        Examples:
            ```python
            batch = await client.batches.get(bid)
            if batch is not None:
                print(f"{batch.fraction:.0%} done, {batch.failed} failed")
            ```
        """
        fields = await self._client.protocol.json("batch.get", bid)
        return None if fields is None else Batch.from_json(fields)

    async def recent(self, *, offset: int = 0, count: int = 25) -> BatchPage:
        """The batches kept, newest first, a page at a time.

        Args:
            offset: how many batches to skip (default 0).
            count: how many to return at most (default 25).

        Raises:
            InvalidValueError: a negative `offset` or a `count` below 1.

        Examples:
            ```python
            page = await client.batches.recent(count=10)
            for batch in page.batches:
                print(batch.id, batch.state)
            ```
        """
        offset, count = rules.checked_listing(offset, count, "batch.list")
        reply = await self._client.protocol.json("batch.list", offset, count)
        return BatchPage(
            total=int(reply.get("total", 0)),
            batches=[Batch.from_json(fields) for fields in reply.get("batches", [])],
        )
