"""Live pages: server-sent events from the qless pubsub channels.

Each open page holds one `/events` stream, and each stream one `client.events()`
subscription. Events are coalesced: a burst becomes one `change` message (the kinds,
queues and jids it touched) at most every `interval` seconds, and the page then fetches
itself again. The protocol publishes nothing for a pop or a heartbeat, so pages also
refresh on a slow timer (static/app.js)."""

from __future__ import annotations

import json
from typing import Any, Final

import anyio
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from aqless.events import Event
from aqless.sharding.client import AnyClient

KEEPALIVE: Final = 15.0  # seconds of silence before a comment line keeps proxies from closing
MAX_NAMES: Final = 100  # queues or jids listed in one change message


class Changes:
    """What changed since the last message, and an event set when anything did."""

    def __init__(self) -> None:
        self.ready = anyio.Event()
        self._kinds: set[str] = set()
        self._queues: set[str] = set()
        self._jids: set[str] = set()
        self._more = False

    def add(self, event: Event) -> None:
        self._kinds.add(event.kind)
        for names, name in ((self._queues, event.queue), (self._queues, event.to)):
            if name is not None:
                names.add(name)
        if event.jid is not None:
            if len(self._jids) < MAX_NAMES:
                self._jids.add(event.jid)
            else:
                self._more = True  # the page cannot tell whether its job changed
        self.ready.set()

    def take(self) -> dict[str, Any]:
        message = {
            "kinds": sorted(self._kinds),
            "queues": sorted(self._queues)[:MAX_NAMES],
            "jids": sorted(self._jids),
            "more": self._more or len(self._queues) > MAX_NAMES,
        }
        self.__init__()  # type: ignore[misc]
        return message


class EventSourceResponse(Response):
    """A `text/event-stream` of `change` messages until the browser goes away."""

    def __init__(self, client: AnyClient, *, interval: float) -> None:
        self.client = client
        self.interval = interval
        self.status_code = 200
        self.background = None
        self.raw_headers = [
            (b"content-type", b"text/event-stream; charset=utf-8"),
            (b"cache-control", b"no-store"),
            (b"x-accel-buffering", b"no"),  # nginx: pass each message on at once
        ]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
        async with anyio.create_task_group() as group:
            group.start_soon(self._until_disconnect, receive, group.cancel_scope)
            await self._stream(send)

    @staticmethod
    async def _until_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        scope.cancel()

    async def _stream(self, send: Send) -> None:
        changes = Changes()

        async def write(text: str) -> None:
            await send({"type": "http.response.body", "body": text.encode(), "more_body": True})

        async with self.client.events() as events, anyio.create_task_group() as group:

            async def collect() -> None:
                async for event in events:
                    changes.add(event)

            group.start_soon(collect)
            await write("retry: 3000\n: subscribed\n\n")
            while True:
                with anyio.move_on_after(KEEPALIVE):
                    await changes.ready.wait()
                if not changes.ready.is_set():
                    await write(": keepalive\n\n")
                    continue
                await anyio.sleep(self.interval)  # let the rest of a burst arrive
                await write(f"event: change\ndata: {json.dumps(changes.take())}\n\n")
