"""``client.tags``: the tags in use, of one server (its ``tag top``) and over the shards of a
sharded deployment (every shard's counters summed, reading no more than it must)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aqless import rules
from aqless._concurrency.routing import ShardedPart, gathered
from aqless._connection import cluster as _cluster
from aqless.contracts import ScriptClient as Client
from aqless.contracts.derived import TagsScripted


class Tags(TagsScripted):
    """The tags in use: ``client.tags.top()``.

    Examples:
        ```python
        popular = await client.tags.top(count=10)
        ```
    """

    def __init__(self, client: Client) -> None:
        self._client = client


class ShardedTags(ShardedPart):
    """The tags in use over the shards: ``client.tags.top()``."""

    async def top(self, *, offset: int = 0, count: int = 25) -> list[str]:
        """The tags carried by two jobs or more over the deployment (the protocol's ``tag
        top`` with each tag's counter summed over the shards: a tag on one job of each
        of two shards is there), most used first, ties by name as a sorted set orders
        them (descending). Exact, reading no more than it must (`_TagCounters`)."""
        offset, count = rules.checked_listing(offset, count, "tags.top")
        wanted = offset + count
        counters = _TagCounters(self._client.clients, page=max(wanted, TAG_PAGE))
        await counters.read_more()
        while not counters.settled(wanted):
            await counters.read_more()
        return counters.ranked()[offset:wanted]


#: the least number of tag counters read from each shard at the first round
TAG_PAGE = 100


class _TagCounters:
    """Every shard's tag counters (``ql:tags``, those at 1 too), read most used first, a
    page a round (twice as long at each), until no tag unread can rank among the first
    wanted (Fagin's threshold algorithm): a tag not read on any shard counts at most the
    sum of the lowest counters read on the shards not read to their end. A tag read on
    some shards has its counters on the others read by ZMSCORE, so each total is exact."""

    def __init__(self, clients: Sequence[Client], *, page: int) -> None:
        self._clients = clients
        self._keys = [f"{client.prefix}tags" for client in clients]
        self._by_tag: dict[str, list[float | None]] = {}  # by shard; None: not read yet
        self._read = [0] * len(clients)
        self._lowest = [0.0] * len(clients)
        self._exhausted = [False] * len(clients)
        self._page = page

    async def read_more(self) -> None:
        """The next page of every shard not read to its end, then the counters the tags
        read have on the other shards."""
        shards = range(len(self._clients))
        for shard, entries in zip(shards, await gathered(shards, self._next_page), strict=True):
            for tag, counter in entries:
                self._by_tag.setdefault(tag, [None] * len(self._clients))[shard] = counter
            self._read[shard] += len(entries)
            self._lowest[shard] = entries[-1][1] if entries else 0.0
            self._exhausted[shard] = len(entries) < self._page
        self._page *= 2
        await gathered(shards, self._fill_in)

    async def _next_page(self, shard: int) -> list[tuple[str, float]]:
        if self._exhausted[shard]:
            return []
        first = self._read[shard]
        redis: Any = self._clients[shard].redis
        with _cluster.calls("reading the tags"):
            entries = await redis.zrevrange(
                self._keys[shard], first, first + self._page - 1, withscores=True
            )
        return [(str(tag), float(counter)) for tag, counter in entries]

    async def _fill_in(self, shard: int) -> None:
        unknown = [tag for tag, counters in self._by_tag.items() if counters[shard] is None]
        if unknown and not self._exhausted[shard]:
            redis: Any = self._clients[shard].redis
            with _cluster.calls("reading the tags"):
                found = await redis.zmscore(self._keys[shard], unknown)
        else:  # read to its end: a tag not read there is not there
            found = [None] * len(unknown)
        for tag, counter in zip(unknown, found, strict=True):
            self._by_tag[tag][shard] = 0.0 if counter is None else float(counter)

    def _totals(self) -> list[tuple[float, str]]:
        """(total, tag) of the tags at 2 or more, ordered as a sorted set read in
        reverse: by total, then by name, descending."""
        totals = ((sum(c or 0.0 for c in counters), tag) for tag, counters in self._by_tag.items())
        return sorted((pair for pair in totals if pair[0] >= 2), reverse=True)

    def settled(self, wanted: int) -> bool:
        """Whether the first `wanted` tags are known: no tag unread can reach them."""
        unread_at_most = sum(
            lowest
            for lowest, exhausted in zip(self._lowest, self._exhausted, strict=True)
            if not exhausted
        )
        totals = self._totals()
        return unread_at_most < 2 or (
            len(totals) >= wanted and totals[wanted - 1][0] > unread_at_most
        )

    def ranked(self) -> list[str]:
        """The tags at 2 or more read so far, most used first."""
        return [tag for _, tag in self._totals()]
