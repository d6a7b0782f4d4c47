"""Queue identifier and priority patterns of a sharded deployment: configuration, so
written to every shard (each shard's workers read their own) and read from the first, as
`ShardedConfig` does."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from aqless.models import PriorityPattern
from aqless.sharding.reads import each_shard

if TYPE_CHECKING:
    from aqless.sharding.deployment import Deployment as ShardedClient

__all__ = ["ShardedQueuePatterns"]


class ShardedQueuePatterns:
    """``client.queue_patterns`` of a sharded deployment: `QueuePatterns`'s methods, set
    on every shard at once and read from the first."""

    def __init__(self, client: ShardedClient) -> None:
        self._client = client

    async def identifiers(self) -> dict[str, list[str]]:
        """Each identifier's queue patterns (`QueuePatterns.identifiers`)."""
        return await self._client.clients[0].queue_patterns.identifiers()

    async def set_identifiers(self, identifiers: Mapping[str, Sequence[str]]) -> None:
        """Replace every identifier on every shard (`QueuePatterns.set_identifiers`)."""
        await each_shard(
            self._client.clients,
            lambda client: client.queue_patterns.set_identifiers(identifiers),
        )

    async def priorities(self) -> list[PriorityPattern]:
        """The priority groups in order (`QueuePatterns.priorities`)."""
        return await self._client.clients[0].queue_patterns.priorities()

    async def set_priorities(self, groups: Sequence[PriorityPattern]) -> None:
        """Replace the priority order on every shard (`QueuePatterns.set_priorities`)."""
        await each_shard(
            self._client.clients, lambda client: client.queue_patterns.set_priorities(groups)
        )
