"""Names a deployment has seen: whether a queue, a failure group, a worker or a rate limit
exists, and the closest known names to one that does not.

The check reads the one set kept of each kind (CORE.md section 2): a queue is a member of
``ql:queues`` (every put registers its queue), a failure group of ``ql:failures`` (while it
holds failed jobs), a worker of ``ql:workers`` (it popped or heart-beat) or of the index of
aqless workers' records, a rate limit of ``ql:rate_limits`` (while it is set). One O(1)
read a shard; the names are listed only for a name unknown, to find the closest ones.
Nothing scans the keyspace.

The CLI turns `UnknownNameError` into exit 1, the dashboard into a 404.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from aqless._concurrency.routing import gathered
from aqless.client import Client, worker_index_key
from aqless.sharding.client import AnyClient

Kind = Literal["queue", "failure group", "worker", "rate limit"]

#: How many close names an unknown one is answered with, at most.
CLOSEST: Final = 3


class UnknownNameError(LookupError):
    """A name of a kind the deployment has never seen (or no longer keeps).

    Attributes:
        kind: ``queue``, ``failure group``, ``worker``, ``rate limit`` or ``group``.
        name: the name asked for.
        closest: the known names closest to it, best first (possibly none).
    """

    def __init__(self, kind: str, name: str, closest: Sequence[str] = ()) -> None:
        self.kind = kind
        self.name = name
        self.closest = list(closest)
        super().__init__(str(self))

    def __str__(self) -> str:
        text = f"no {self.kind} {self.name!r}"
        if self.closest:
            text += " (did you mean " + " or ".join(repr(n) for n in self.closest) + "?)"
        return text


def closest(name: str, known: Iterable[str]) -> list[str]:
    """The known names closest to `name` (difflib's ratio of at least 0.6), best first."""
    return difflib.get_close_matches(name, list(known), n=CLOSEST, cutoff=0.6)


@dataclass(frozen=True, slots=True)
class _Set:
    """One kind's set: the reads that say whether a name is a member, and all the members."""

    keys: Callable[[Client], Sequence[str]]
    sorted_set: bool

    def exists_reads(self, shard: Client, name: str) -> list[tuple[str, ...]]:
        command = "ZSCORE" if self.sorted_set else "SISMEMBER"
        return [(command, key, name) for key in self.keys(shard)]

    def list_reads(self, shard: Client) -> list[tuple[str | int, ...]]:
        if self.sorted_set:
            return [("ZRANGE", key, 0, -1) for key in self.keys(shard)]
        return [("SMEMBERS", key) for key in self.keys(shard)]


_SETS: Final[dict[Kind, _Set]] = {
    "queue": _Set(lambda c: [f"{c.prefix}queues"], sorted_set=True),
    "failure group": _Set(lambda c: [f"{c.prefix}failures"], sorted_set=False),
    "worker": _Set(lambda c: [f"{c.prefix}workers", worker_index_key(c.prefix)], sorted_set=True),
    "rate limit": _Set(lambda c: [f"{c.prefix}rate_limits"], sorted_set=False),
}


async def exists(client: AnyClient, kind: Kind, name: str) -> bool:
    """Whether any shard keeps `name` in the set of its `kind` (one round trip, the shards
    asked at once)."""
    known = _SETS[kind]

    async def member(shard: Client) -> list[Any]:
        return await shard.protocol.plain_many("known." + kind, known.exists_reads(shard, name))

    replies = await gathered(client.servers, member)
    return any(reply not in (None, 0) for shard in replies for reply in shard)


async def names(client: AnyClient, kind: Kind) -> list[str]:
    """Every name of `kind` the deployment keeps, sorted."""
    known = _SETS[kind]

    async def members(shard: Client) -> list[Any]:
        return await shard.protocol.plain_many("known." + kind, known.list_reads(shard))

    listed = await gathered(client.servers, members)
    return sorted({str(member) for shard in listed for found in shard for member in found})


async def require(client: AnyClient, kind: Kind, name: str) -> None:
    """UnknownNameError (with the closest known names) unless the deployment knows `name`."""
    if not await exists(client, kind, name):
        raise UnknownNameError(kind, name, closest(name, await names(client, kind)))


async def unseen(client: AnyClient, kind: Kind, wanted: Iterable[str]) -> list[str]:
    """The names among `wanted` the deployment does not know, in their order."""
    return [name for name in wanted if not await exists(client, kind, name)]


_QUEUE_LIMIT: Final = re.compile(r"(?:.*?:)?ql:q:(?P<queue>.+)", re.DOTALL)


def limit_label(limit: str) -> str:
    """A throttle's or rate limit's id as people read it: a queue's own limit, whose id is
    the key ``ql:q:<queue>`` (under any namespace or shard prefix), is ``queue <queue>``;
    a named one keeps its name."""
    found = _QUEUE_LIMIT.fullmatch(limit)
    return limit if found is None else f"queue {found['queue']}"
