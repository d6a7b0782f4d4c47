"""A lean pubsub connection: the worker's subscription to put events and pushed jobs.

redis-py's PubSub (and the EventStream around it) hands over one message per read, through a
few layers of Python and a task switch. A ``Subscriber`` is a ``RespStream``
(aqless._connection.lean) that also
takes pubsub messages and hands everything one read from the socket brings to a callback at
once, as one batch: a pushed job starts without waiting for a task to wake, and the reader
can weigh a put event against the push of the same job right behind it.

It subscribes and unsubscribes on one connection, waiting each time for the server's
confirmation: once ``unsubscribe()`` returns, nothing more was published to it, and every
message published before has been heard.

A sharded one (``sharded=True``: a shard of a sharded deployment, whose script SPUBLISHes)
does the same with SSUBSCRIBE and SUNSUBSCRIBE; the server unsubscribing it on its own (its
slot moved) drops the connection, so its owner connects again where the slot is now.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence

import hiredis
from redis.exceptions import ConnectionError as RedisConnectionError

from aqless._connection.endpoint import Endpoint
from aqless._connection.lean import NO_MORE, RespStream, dropped, open_stream, pack

__all__ = ["Message", "Subscriber"]

logger = logging.getLogger(__name__)

Message = tuple[bytes, bytes]  # channel, payload


class Subscriber(RespStream):
    """A connection that subscribes to channels and hands what is published on them to
    `hear`, one batch per read, in publication order (from the event loop's callback: `hear`
    must not block, and what it raises is logged and dropped)."""

    def __init__(
        self,
        reader: hiredis.Reader,
        timeout: float | None,
        hear: Callable[[list[Message]], None],
        *,
        sharded: bool = False,
    ) -> None:
        super().__init__(reader, timeout)
        self._hear = hear
        self._verbs = ("SSUBSCRIBE", "SUNSUBSCRIBE") if sharded else ("SUBSCRIBE", "UNSUBSCRIBE")
        self._waiting: asyncio.Future[None] | None = None
        self._confirming: asyncio.Future[None] | None = None
        self._confirmations_due = 0
        self.subscribed = 0  # channels, as the server last counted them

    @classmethod
    async def open(
        cls, endpoint: Endpoint, hear: Callable[[list[Message]], None], *, sharded: bool = False
    ) -> Subscriber:
        """A Subscriber to the server of `endpoint` (replies as bytes whatever they say)."""
        return await open_stream(
            endpoint,
            lambda reader, timeout: cls(reader, timeout, hear, sharded=sharded),
            decode=False,
        )

    async def subscribe(self, channels: Sequence[str]) -> None:
        await self._confirmed((self._verbs[0], *channels), len(channels))

    async def unsubscribe(self) -> None:
        """Unsubscribe from every channel; what was published before has been heard."""
        if self.subscribed:
            await self._confirmed((self._verbs[1],), self.subscribed)

    async def unsubscribe_from(self, channels: Sequence[str]) -> None:
        """Unsubscribe from these channels only; what was published to them before has
        been heard."""
        await self._confirmed(("UNSUBSCRIBE", *channels), len(channels))

    async def ping(self) -> None:
        """Round trip to the server (a subscribed connection answers a PING too)."""
        await self.send([pack(("PING",))], 0)

    async def wait(self, timeout: float) -> None:
        """Return after `timeout` seconds or at ``wake()``; raise if the connection drops."""
        if self.lost is not None:
            raise dropped(self.lost)
        self._waiting = waiting = self.loop.create_future()
        timer = self.loop.call_later(timeout, self.wake)
        try:
            await waiting
        finally:
            self._waiting = None
            timer.cancel()

    def wake(self) -> None:
        """Make a ``wait()`` return."""
        self._resolve(self._waiting)

    async def _confirmed(self, command: tuple[str, ...], confirmations: int) -> None:
        if self.lost is not None:
            raise dropped(self.lost)
        self._confirming = confirming = self.loop.create_future()
        self._confirmations_due = confirmations
        if self._transport is not None:
            self._transport.write(pack(command))
        try:
            await confirming
        finally:
            self._confirming = None

    def data_received(self, data: bytes) -> None:
        reader = self._reader
        messages: list[Message] = []
        try:
            reader.feed(data)
            while (reply := reader.gets()) is not NO_MORE:
                kind = reply[0] if type(reply) is list and reply else None
                if kind in (b"message", b"smessage"):
                    messages.append((reply[1], reply[2]))
                elif kind == b"sunsubscribe" and self._confirming is None:  # the slot moved
                    self.abort(RedisConnectionError("the server dropped the shard channels"))
                elif kind in (b"subscribe", b"unsubscribe", b"ssubscribe", b"sunsubscribe"):
                    self._confirm(reply[2])
                else:  # the greeting's replies, a PING's ([b"pong", b""] while subscribed)
                    self._deliver(reply)
        except hiredis.ProtocolError as error:
            self.abort(RedisConnectionError(f"the server's reply is garbled: {error}"))
        if messages:
            try:
                self._hear(messages)
            except Exception:
                logger.exception("a pubsub message could not be handled")

    def _confirm(self, count: int) -> None:
        self.subscribed = count
        self._confirmations_due -= 1
        if self._confirmations_due <= 0 or count == 0:
            self._resolve(self._confirming)

    def connection_lost(self, error: BaseException | None) -> None:
        super().connection_lost(error)
        for waiting in (self._waiting, self._confirming):
            if waiting is not None and not waiting.done():
                waiting.set_exception(dropped(self.lost or RedisConnectionError("closed")))

    @staticmethod
    def _resolve(waiting: asyncio.Future[None] | None) -> None:
        if waiting is not None and not waiting.done():
            waiting.set_result(None)
