"""`ShardedClient.events()`: every shard's event stream merged into one.

Each shard's client opens its own `EventStream` on its namespace's channels (the script
PUBLISHes, which a Cluster broadcasts to every node, so one subscription per shard hears
exactly that shard's events). A reader task per shard moves its events into one memory
stream, so the merged stream yields the same `Event` objects in the order they arrive.
A shard's ``'reconnected'`` event is passed on: events of that shard may have been lost.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from contextlib import AsyncExitStack
from types import TracebackType
from typing import Self

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from aqless.client import Client
from aqless.errors import ConfigurationError
from aqless.events import Event, EventStream

__all__ = ["MergedEventStream"]


class MergedEventStream:
    """The events of every shard, as one async iterator: use it as
    ``async with client.events() as events: async for event in events: ...``. The
    shards are subscribed (and have confirmed it) when ``__aenter__`` returns.

    Args:
        clients: the shards' clients.
        channels, workers: as `Client.events`, for every shard.
    """

    def __init__(
        self, clients: Sequence[Client], *channels: str, workers: Sequence[str] = ()
    ) -> None:
        self._streams = [client.events(*channels, workers=workers) for client in clients]
        self._stack: AsyncExitStack | None = None
        self._receive: MemoryObjectReceiveStream[Event] | None = None

    @property
    def channels(self) -> tuple[str, ...]:
        """The full names of the subscribed channels, every shard's."""
        return tuple(channel for stream in self._streams for channel in stream.channels)

    async def __aenter__(self) -> Self:
        if self._stack is not None:
            raise RuntimeError("a MergedEventStream can be opened once")
        send, receive = anyio.create_memory_object_stream[Event](math.inf)
        async with AsyncExitStack() as stack:
            stack.push_async_callback(receive.aclose)
            tasks = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(tasks.cancel_scope.cancel)  # runs before the group's exit
            for stream in self._streams:
                await stack.enter_async_context(stream)
            self._start_readers(tasks, send)
            self._stack = stack.pop_all()
        self._receive = receive
        return self

    def _start_readers(self, tasks: TaskGroup, send: MemoryObjectSendStream[Event]) -> None:
        async def pump(stream: EventStream, send: MemoryObjectSendStream[Event]) -> None:
            async with send:
                async for event in stream:
                    await send.send(event)

        for stream in self._streams:
            tasks.start_soon(pump, stream, send.clone())
        send.close()  # the stream ends when every reader has

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
            await stack.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Event:
        if self._receive is None:
            raise ConfigurationError(
                "open a sharded event stream with `async with client.events() as events`"
            )
        try:
            return await self._receive.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None
