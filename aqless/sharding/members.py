"""Which plain clients are a sharded deployment's shards: `ShardedClient` marks each shard's
client as it opens it, and what must act apart on a shard asks (a workflow's children's
jids: aqless.workflows.children). A client is marked for as long as it lives."""

from __future__ import annotations

from typing import TYPE_CHECKING
from weakref import WeakSet

if TYPE_CHECKING:
    from aqless.client import Client

__all__ = ["is_shard", "mark_shard"]

_SHARDS: WeakSet[object] = WeakSet()


def mark_shard(client: Client) -> None:
    """Mark `client` as the client of a shard of a sharded deployment."""
    _SHARDS.add(client)


def is_shard(client: object) -> bool:
    """Whether `client` is the client of a shard of a sharded deployment (made by a
    `ShardedClient`), not a plain deployment's."""
    return client in _SHARDS
