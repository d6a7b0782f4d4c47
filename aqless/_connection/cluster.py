"""Redis / Valkey Cluster: a deployment's keys in one slot, its events from one node.

A deployment runs on a Cluster when its namespace carries a hash tag (``{billing}``): every
key and the script's KEYS[1] (the prefix ``{billing}:ql:``) then hash to one slot, so each
call and each pipeline goes to the one node that holds it (the lean connection's Endpoint
finds that node, aqless._connection.endpoint). The script publishes with PUBLISH, which a
Cluster forwards to every node, so an event stream may listen on any node; a shard of a
sharded deployment publishes with SPUBLISH instead, heard only on the primary of its slot.
``NodePubSub`` takes the node that holds the deployment's slot, looked up again at each
(re)subscription with the slot map read again first (``relocate``), so a stream follows a
failover (the node it listened on may be gone) or a moved slot.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.client import PubSub
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisClusterException, RedisError, SlotNotCoveredError

from aqless._connection.protocol import refusal_for
from aqless.errors import ConnectionLostError

__all__ = ["NodePubSub", "calls", "connect", "hash_tag"]


def hash_tag(name: str) -> str | None:
    """The hash tag of `name` as a Cluster reads it: the text between the first ``{`` and
    the next ``}``, if there is any; None otherwise (then the whole key is hashed)."""
    start = name.find("{")
    if start < 0:
        return None
    end = name.find("}", start + 1)
    return name[start + 1 : end] if end > start + 1 else None


def connect(nodes: str | Sequence[tuple[str, int]], **options: Any) -> RedisCluster:
    """A cluster client from a ``redis://`` URL of one node or (host, port) pairs; it
    decodes replies and does not resend commands after a dropped connection (as Client)."""
    options = {"decode_responses": True, "retry": Retry(NoBackoff(), 0), **options}
    if isinstance(nodes, str):
        return RedisCluster.from_url(nodes, **options)
    return RedisCluster(startup_nodes=[ClusterNode(host, port) for host, port in nodes], **options)


@contextmanager
def calls(what: str) -> Iterator[None]:
    """Calls made over redis-py's Cluster client (a sharded deployment's map, a node's INFO)
    raise aqless's typed errors, as the script's do
    (aqless._connection.protocol.refusal_for): a server that cannot serve now (LOADING,
    READONLY, OOM, MISCONF...) or a lost link is a ConnectionLostError or one of its kinds;
    a Cluster that cannot be used at all, a ConnectionLostError too."""
    try:
        yield
    except (RedisError, RedisClusterException, OSError) as error:
        translated = refusal_for(what, error) or ConnectionLostError(f"{what}: {error}")
        raise translated from error


class NodePubSub:
    """Makes PubSubs on a plain connection to the primary holding `key`'s slot (any node
    hears every PUBLISH of a Cluster, only that one a shard's SPUBLISH); before the client
    has read the slot map, on a startup node. An EventStream calls `relocate`, then asks
    again, at each reconnection, so it follows a failover."""

    def __init__(self, cluster: RedisCluster, key: str) -> None:
        self._cluster = cluster
        self._key = key
        self._located = False

    async def relocate(self) -> None:
        """Read the slot map (again, after the first time: a failover or a slot migration
        may have moved the slot); a failure to is a ConnectionError, retried as one."""
        try:
            if self._located:
                await self._cluster.nodes_manager.initialize()
            else:
                await self._cluster.initialize()
        except (RedisClusterException, RedisError) as error:
            raise RedisConnectionError(f"cannot read the Cluster's slot map: {error}") from error
        self._located = True

    def node(self) -> ClusterNode:
        try:
            node = self._cluster.get_node_from_key(self._key)
        except SlotNotCoveredError:  # the slot map is not read yet, or being reassigned
            node = None
        if node is None:
            node = next(iter(self._cluster.nodes_manager.startup_nodes.values()))
        return node

    def pubsub(self) -> PubSub:
        node = self.node()
        # a pool of its own: PubSub.aclose() disconnects the one connection it lends
        pool = aioredis.ConnectionPool(
            connection_class=node.connection_class, **node.connection_kwargs
        )
        return PubSub(pool)
