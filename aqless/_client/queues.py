"""``client.queues``: a queue by name (no I/O), and every queue's counts, names and scaling."""

from __future__ import annotations

from collections.abc import Sequence

from aqless.contracts import ScriptClient as Client
from aqless.contracts.derived import QueuesScripted
from aqless.models import QueueCounts
from aqless.queue import Queue
from aqless.scaling.estimate import QueueScaling, every_queue_scaling


class Queues(QueuesScripted):
    """``client.queues[name]`` (no I/O), and every queue's counts and names.

    Examples:
        ```python
        emails = client.queues["emails"]
        for counts in await client.queues.counts():
            print(counts.name, counts.waiting)
        ```
    """

    def __init__(self, client: Client) -> None:
        self._client = client

    def __getitem__(self, name: str) -> Queue:
        return Queue(self._client, name)

    async def counts(self) -> list[QueueCounts]:
        """Every queue's counts by state, one `QueueCounts` per queue the server knows.

        Examples:
            ```python
            backlog = {c.name: c.waiting for c in await client.queues.counts()}
            ```
        """
        reply = await self._client.protocol.json("queues.counts")
        return [QueueCounts.from_json(counts) for counts in reply or []]

    async def scaling(
        self, target_p95: float, *, previous: Sequence[QueueScaling] = ()
    ) -> list[QueueScaling]:
        """Every queue's `Queue.scaling`, each over the time since its reading in
        `previous` (the last call's answer), if any.

        Args:
            target_p95: the 95th-percentile wait to keep under, in seconds.
            previous: the last call's answer (default ``()``: each over the day so far).

        Examples:
            ```python
            readings = await client.queues.scaling(30.0)
            readings = await client.queues.scaling(30.0, previous=readings)
            print(sum(r.slots for r in readings))
            ```
        """
        return await every_queue_scaling(self, target_p95, previous)
