"""`ShardedClient.events()`: every shard's event stream merged into one, following the map.

Each shard's client opens its own `EventStream` on its namespace's channels: with
SSUBSCRIBE on the primary holding the shard's slot when its script SPUBLISHes
(aqless.sharding.pubsub), else with SUBSCRIBE (PUBLISH reaches every node). A reader task per
shard owns its stream and moves its events into one memory stream, so the merged stream
yields the same `Event` objects in the order they arrive; a shard's stream that fails (a
refused resubscription) passes its error on, raised by the merged stream where it
arrives, as itself (never anyio's ExceptionGroup). A follower task opens the stream
of a shard the client's map gains (when the client adopts a newer map, or reads it again
every `refresh` seconds) and closes the stream of a shard the map forgot.
A shard's ``'reconnected'`` event is passed on: events of that shard may have been lost.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from contextlib import AsyncExitStack
from types import TracebackType
from typing import Protocol, Self

import anyio
from anyio.abc import TaskGroup, TaskStatus
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from aqless._concurrency.task_groups import own_errors
from aqless.errors import AqlessError, ConfigurationError
from aqless.events import Event, EventStream

__all__ = ["MergedEventStream", "ShardSource"]

logger = logging.getLogger(__name__)


class _Shard(Protocol):
    @property
    def id(self) -> int: ...


class ShardMap(Protocol):
    """What the stream reads of a shard map (aqless.sharding.map.ShardMap)."""

    @property
    def version(self) -> int: ...
    @property
    def shards(self) -> Sequence[_Shard]: ...


class _ShardClient(Protocol):
    def events(self, *channels: str, workers: Sequence[str] = ()) -> EventStream: ...


class ShardSource(Protocol):
    """The ShardedClient, as its merged stream sees it."""

    @property
    def refresh(self) -> float: ...

    @property
    def shards(self) -> ShardMap: ...

    @property
    def map_adopted(self) -> anyio.Event: ...

    def shard(self, shard_id: int) -> _ShardClient: ...

    async def current_map(self) -> ShardMap: ...


class MergedEventStream:
    """The events of every shard, as one async iterator: use it as
    ``async with client.events() as events: async for event in events: ...``. The
    shards are subscribed (and have confirmed it) when ``__aenter__`` returns; a shard
    added later is heard from once the client's map names it (events it published
    before are not).

    Args:
        source: the sharded client.
        channels, workers: as `Client.events`, for every shard.
    """

    def __init__(self, source: ShardSource, *channels: str, workers: Sequence[str] = ()) -> None:
        self._source = source
        self._channels = channels
        self._workers = tuple(workers)
        self._streams: dict[int, EventStream] = {}
        self._readers: dict[int, anyio.CancelScope] = {}
        self._version = -1  # of the map the readers follow
        self._stack: AsyncExitStack | None = None
        self._receive: MemoryObjectReceiveStream[Event | Exception] | None = None

    @property
    def channels(self) -> tuple[str, ...]:
        """The full names of the subscribed channels, every shard's."""
        return tuple(channel for stream in self._streams.values() for channel in stream.channels)

    async def __aenter__(self) -> Self:
        if self._stack is not None:
            raise RuntimeError("a MergedEventStream can be opened once")
        send, receive = anyio.create_memory_object_stream[Event | Exception](math.inf)
        with own_errors():  # a shard that cannot be heard: its own error, not a group's
            async with AsyncExitStack() as stack:
                stack.push_async_callback(receive.aclose)
                stack.callback(send.close)  # the follower's: the stream ends with the readers
                tasks = await stack.enter_async_context(anyio.create_task_group())
                stack.callback(tasks.cancel_scope.cancel)  # runs before the group's exit
                await self._follow_map(self._source.shards, tasks, send, initial=True)
                tasks.start_soon(self._follow, tasks, send)
                self._stack = stack.pop_all()
        self._receive = receive
        return self

    async def _follow(
        self, tasks: TaskGroup, send: MemoryObjectSendStream[Event | Exception]
    ) -> None:
        """For ever: wait for a newer map (adopted by the client, or read again every
        `refresh` seconds), then open and close shards' streams to match it."""
        while True:
            adopted = self._source.map_adopted
            if self._source.shards.version == self._version:
                with anyio.move_on_after(self._source.refresh):
                    await adopted.wait()
            try:
                shard_map = await self._source.current_map()
            except AqlessError as error:
                logger.warning("the merged event stream cannot read the shard map (%s)", error)
                shard_map = self._source.shards
            await self._follow_map(shard_map, tasks, send)

    async def _follow_map(
        self,
        shard_map: ShardMap,
        tasks: TaskGroup,
        send: MemoryObjectSendStream[Event | Exception],
        *,
        initial: bool = False,
    ) -> None:
        wanted = {shard.id for shard in shard_map.shards}
        for shard_id in set(self._readers) - wanted:  # forgotten: its stream closes
            self._readers.pop(shard_id).cancel()
            self._streams.pop(shard_id, None)
        for shard_id in sorted(wanted - set(self._readers)):
            stream = self._source.shard(shard_id).events(*self._channels, workers=self._workers)
            try:
                await tasks.start(self._read, shard_id, stream, send.clone())
            except AqlessError as error:  # tried again at the next look, `refresh` later
                if initial:
                    raise
                logger.warning("cannot hear the events of shard %d yet (%s)", shard_id, error)
        self._version = shard_map.version

    async def _read(
        self,
        shard_id: int,
        stream: EventStream,
        send: MemoryObjectSendStream[Event | Exception],
        *,
        task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        with anyio.CancelScope() as scope, send:
            async with stream:
                self._streams[shard_id] = stream
                self._readers[shard_id] = scope
                task_status.started()
                try:
                    async for event in stream:
                        await send.send(event)
                except Exception as error:  # the reader raises it, the other shards go on
                    await send.send(error)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop the readers and close every shard's stream (idempotent); call it from the
        task that opened the stream."""
        stack, self._stack = self._stack, None
        if stack is not None:
            with own_errors():
                await stack.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Event:
        if self._receive is None:
            raise ConfigurationError(
                "open a sharded event stream with `async with client.events() as events`"
            )
        try:
            received = await self._receive.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None
        if isinstance(received, Exception):
            raise received
        return received
