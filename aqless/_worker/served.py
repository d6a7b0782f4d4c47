"""The queues a worker serves: what its patterns match, read again every `refresh` seconds
(or at the next pop, once told that a new queue may match), and which of them have a
throttle of their own (a job of such a queue frees a place for others when it ends)."""

from __future__ import annotations

import json

import anyio

from aqless._worker.reservers import QueueSelection
from aqless.client import Client
from aqless.models import ThrottleInfo


class ServedQueues:
    def __init__(self, client: Client, selection: QueueSelection, refresh: float) -> None:
        self._client = client
        self.selection = selection
        self.refresh = refresh
        self.names: list[str] = []
        self.throttled: set[str] = set()
        self._read_at = float("-inf")

    def stale(self) -> None:
        """Read the queues again before the next pop."""
        self._read_at = float("-inf")

    async def current(self) -> list[str]:
        now = anyio.current_time()
        if now - self._read_at >= self.refresh:
            self.names = await self.selection.resolve(self._client)
            self._read_at = now
            self.throttled = await self._with_throttles(self.names)
        return self.names

    async def _with_throttles(self, queues: list[str]) -> set[str]:
        """The queues whose own throttle has a maximum."""
        calls = [[queue] for queue in queues]
        replies = await self._client.protocol.many("queue.throttle.get", calls) if calls else []
        return {
            queue
            for queue, reply in zip(queues, replies, strict=True)
            if isinstance(reply, str) and ThrottleInfo.from_json(json.loads(reply)).maximum > 0
        }
