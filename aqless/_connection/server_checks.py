"""What aqless checks of a server when a client opens or a worker starts: that the server
never deletes keys on its own when it is full.

A server whose ``maxmemory-policy`` evicts keys (``allkeys-lru``, the default of several
hosted offers) silently deletes jobs, locks and queues once it reaches ``maxmemory``.
``noeviction`` refuses writes instead (aqless raises ServerFullError). A ``volatile-*``
policy evicts only keys with a TTL: aqless sets one only on a throttle given an
``expiration``, which may then end early, so those policies are accepted too.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from redis.exceptions import RedisError

from aqless._connection.lean import LeanConnection
from aqless.errors import ConfigurationError

logger = logging.getLogger(__name__)

FIX = "CONFIG SET maxmemory-policy noeviction"

# the connections whose server has been checked already: one warning each, not one per call
_checked: weakref.WeakSet[LeanConnection] = weakref.WeakSet()


class EvictingServerError(ConfigurationError):
    """The server evicts keys when full, and the client is strict (or aqless-run refuses)."""


_PATIENCE = 5.0  # seconds an INFO may take before the check is given up


def evicts(policy: str) -> bool:
    """Whether `policy` may delete keys of ours (unknown policies are taken to)."""
    return policy != "noeviction" and not policy.startswith("volatile-")


def parse_info(reply: object) -> dict[str, str]:
    """The fields of an INFO reply's text (``name:value`` lines)."""
    text = reply.decode() if isinstance(reply, bytes) else str(reply)
    fields = (line.partition(":") for line in text.splitlines() if ":" in line)
    return {name: value.strip() for name, _, value in fields}


def policies(info: Mapping[str, Any]) -> set[str]:
    """The ``maxmemory_policy`` of every server in an INFO reply (a Cluster's is per node)."""
    if "maxmemory_policy" in info:
        return {str(info["maxmemory_policy"])}
    return {
        policy
        for value in info.values()
        if isinstance(value, Mapping)
        for policy in policies(value)
    }


async def check_eviction_policy(
    connection: LeanConnection,
    *,
    strict: bool,
    refusing: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """Warn once (logger ``aqless``) if the server evicts keys (the server the calls go to:
    on a Cluster, the node holding the deployment's slot); raise EvictingServerError
    instead when `strict`, after awaiting `refusing` (a client closing itself). A server
    that does not answer INFO (ACLs, some hosted offers, unreachable just now) is not
    checked: said at debug level."""
    if connection in _checked:
        return
    try:
        async with asyncio.timeout(_PATIENCE):  # a silent host must not hold up open()
            info = parse_info(await connection.call(("INFO", "memory")))
    except (RedisError, OSError, TimeoutError) as error:
        logger.debug("the server's maxmemory-policy could not be checked: %s", error)
        return
    evicting = sorted(policy for policy in policies(info) if evicts(policy))
    if evicting:
        message = (
            f"the server evicts keys when it is full (maxmemory-policy {', '.join(evicting)}): "
            f"it may delete jobs and their locks. Set `{FIX}` (and in the server's "
            "configuration file)"
        )
        if strict:
            if refusing is not None:
                await refusing()
            raise EvictingServerError(message)
        logger.warning("%s", message)
    _checked.add(connection)
