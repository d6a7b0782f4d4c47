"""A worker's ear for new work: while it has free slots and found its queues empty, it
listens on ``ql:log`` and is told the moment a job is put (or advanced) into a queue it
serves, by any qless client. A worker with full slots stops listening, so a busy worker
reads no events."""

from __future__ import annotations

import logging
from collections.abc import Callable

import anyio

from aqless._served import ServedQueues
from aqless.client import Client
from aqless.errors import ConnectionLostError
from aqless.events import RECONNECTED

logger = logging.getLogger("aqless.worker")


class PutListener:
    """Calls `news()` when an event may bring work (and once per (re)subscription: a put
    made just before it went unheard)."""

    def __init__(self, client: Client, served: ServedQueues, news: Callable[[], None]) -> None:
        self._client = client
        self._served = served
        self._news = news
        self._wanted = anyio.Event()  # set while the worker wants put events
        self._scope: anyio.CancelScope | None = None

    def want(self, wanted: bool) -> None:
        if wanted and not self._wanted.is_set():
            self._wanted.set()
        elif not wanted and self._wanted.is_set():
            self._wanted = anyio.Event()
            if self._scope is not None:
                self._scope.cancel()

    async def run(self) -> None:
        """Listen whenever wanted, for ever (resubscribing after a lost connection)."""
        failures = 0
        while True:
            await self._wanted.wait()
            try:
                async with self._client.events("log") as events:
                    with anyio.CancelScope() as self._scope:
                        if not self._wanted.is_set():
                            continue
                        # a put before the subscription, maybe into a new queue: look again
                        self._served.stale()
                        self._news()
                        failures = 0
                        async for event in events:
                            if self._brings_work(event.kind, event.queue, event.to):
                                self._news()
            except ConnectionLostError as error:
                failures += 1
                logger.warning("cannot subscribe to put events (%s)", error)
                await anyio.sleep(min(0.1 * 2**failures, 5.0))
            finally:
                self._scope = None

    def _brings_work(self, kind: str, queue: str | None, to: str | None) -> bool:
        if kind == RECONNECTED:
            return True
        target = queue if kind == "put" else to if kind == "advanced" else None
        if target is None or not self._served.selection.may_serve(target):
            return False
        if target not in self._served.names:
            self._served.stale()  # a new queue a pattern may match
        return True
