"""Each shard of a sharded deployment as an operator looks at it (`ShardReport`): its queue
counts, lag and primary's memory, the shards asked at once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aqless._concurrency.routing import gathered
from aqless._connection import cluster as _cluster
from aqless.client import Client
from aqless.models import QueueCounts

if TYPE_CHECKING:
    from aqless.sharding.deployment import Deployment as ShardedClient

__all__ = ["ShardReport", "primary_info", "queues_and_lag", "shard_reports"]


@dataclass(frozen=True, slots=True)
class ShardReport:
    """One shard, as an operator looks at it.

    Attributes:
        id, namespace, state: the shard's, from the shard map.
        node: the ``host:port`` of the primary holding its slot.
        queues: each queue's counts on this shard.
        lag: seconds the longest-waiting next job of its queues has waited since it
            was put (0 when nothing waits): a shard that lags shows here.
        used_memory: its primary's ``used_memory`` in bytes (INFO memory); None if
            the primary did not say.
    """

    id: int
    namespace: str
    state: str
    node: str
    queues: tuple[QueueCounts, ...]
    lag: float
    used_memory: int | None

    @property
    def waiting(self) -> int:
        return sum(counts.waiting for counts in self.queues)

    @property
    def running(self) -> int:
        return sum(counts.running for counts in self.queues)

    @property
    def scheduled(self) -> int:
        return sum(counts.scheduled for counts in self.queues)

    @property
    def depends(self) -> int:
        return sum(counts.depends for counts in self.queues)

    @property
    def stalled(self) -> int:
        return sum(counts.stalled for counts in self.queues)


async def shard_reports(client: ShardedClient) -> list[ShardReport]:
    """Every shard's report (draining ones too), the shards read at once."""
    shards = client.shards.shards
    clients = [client.shard(shard.id) for shard in shards]
    reports = await gathered(clients, _report_parts)
    return [
        ShardReport(shard.id, shard.namespace, shard.state, node, queues, lag, memory)
        for shard, (node, queues, lag, memory) in zip(shards, reports, strict=True)
    ]


async def _report_parts(
    client: Client,
) -> tuple[str, tuple[QueueCounts, ...], float, int | None]:
    counts, lag = await queues_and_lag(client)
    node, memory = await _primary_memory(client)
    return node, counts, lag, memory


async def queues_and_lag(client: Client) -> tuple[tuple[QueueCounts, ...], float]:
    """Each queue's counts in `client`'s namespace, and the seconds the longest-waiting next
    job of its queues has waited since it was put (0 when nothing waits)."""
    counts = tuple(await client.queues.counts())
    now = client.clock()
    nexts = await gathered(counts, lambda queue: client.queues[queue.name].peek(1))
    waited = [
        now - entry.when
        for peeked in nexts
        for job in peeked[:1]
        for entry in job.history
        if entry.what == "put"
    ]
    return counts, max([0.0, *waited])


async def _primary_memory(client: Client) -> tuple[str, int | None]:
    """The address of the primary holding the shard's slot, and its used memory."""
    node, info = await primary_info(client, "memory")
    used = info.get("used_memory")
    return node, None if used is None else int(used)


async def primary_info(client: Client, *sections: str) -> tuple[str, dict[str, Any]]:
    """The address of the primary holding a shard's slot (`client` is the shard's), and
    its INFO `sections` (empty if it answered none)."""
    redis: Any = client.redis
    node = redis.get_node_from_key(f"{client.prefix}")
    with _cluster.calls("reading a primary's INFO"):
        info = await redis.info(*sections, target_nodes=node)
    if isinstance(info, dict) and node.name in info and isinstance(info[node.name], dict):
        info = info[node.name]  # some redis-py versions key a node's reply by its name
    return str(node.name), info if isinstance(info, dict) else {}
