"""Throttles and rate limits of a sharded deployment: each on the one shard that enforces it.

A named throttle or rate limit lives on the shard keeping its name
(`ShardedClient.keeper_of`), where every job naming it first is put; a queue's own lives on
the queue's pinned shard, and its id (``{<deployment>~<k>}:ql:q:<queue>``, as a plain
client's is ``<prefix>q:<queue>``) names that shard's namespace, so an id read from a
listing is found again where it was read.
"""

from __future__ import annotations

from collections.abc import Sequence
from inspect import BoundArguments
from typing import TYPE_CHECKING

from aqless.client import Client, Throttle
from aqless.contracts import RateLimit
from aqless.limits import RateLimits
from aqless.models import RateLimitInfo
from aqless.sharding.routing import every, routed

if TYPE_CHECKING:
    from aqless.sharding.deployment import Deployment as ShardedClient

__all__ = ["ShardedRateLimits", "ShardedThrottles", "shard_of_limit"]


def shard_of_limit(client: ShardedClient, name: str) -> int:
    """The shard holding the throttle or rate limit `name`: the shard whose namespace
    prefixes it (a queue's own), else the keeper of the name."""
    for shard in client.shards.shards:
        if name.startswith(client.shard(shard.id).prefix):
            return shard.id
    return client.keeper_of(name)


def _by_id(parts: Sequence[list[RateLimitInfo]], arguments: BoundArguments) -> list[RateLimitInfo]:
    """Every limit set on any shard, queues' and named ones, by id."""
    return sorted((info for infos in parts for info in infos), key=lambda info: info.id)


class ShardedThrottles:
    """``client.throttles[name]``: the throttle on the shard keeping its name
    (`ShardedClient.keeper_of`), where every job naming it first is put; a queue's own
    throttle id (``queue.throttle()``'s) on the shard its namespace names."""

    def __init__(self, client: ShardedClient) -> None:
        self._client = client

    def __getitem__(self, name: str) -> Throttle:
        return Throttle(self._client.shard(shard_of_limit(self._client, name)), name)


class ShardedRateLimits:
    """``client.rate_limits[name]`` (no I/O): the limiter on the shard keeping its name, as
    `ShardedThrottles`; ``await ....all()`` lists every shard's."""

    def __init__(self, client: ShardedClient) -> None:
        self._client = client

    def __getitem__(self, name: str) -> RateLimit:
        return self._client.shard(shard_of_limit(self._client, name)).rate_limits[name]

    def of_queue(self, queue: str) -> RateLimit:
        """A queue's own limiter, on its pinned shard (``queue.rate_limit``)."""
        return self._client.queues[queue].rate_limit

    def _part(self, client: Client) -> RateLimits:
        return client.rate_limits

    all = routed(RateLimits.all, every, _by_id)
