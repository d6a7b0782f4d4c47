"""One view of a sharded deployment (aqless.sharding.client): the plain Client's reads, merged over
the shards, each the same shape as the plain one's so code (the CLI, the dashboard) can
take either client.

Every read asks the shards at once (one task per shard). A listing's merged order
interleaves the shards, the first of each shard in shard order, then the second of
each...: the order in which a sharded pop shares out its count, and stable while the
shards' own lists are. A page at `offset` reads the first ``offset + count`` of each shard.
Totals and counts are sums; a queue's statistics are merged exactly (parallel Welford).
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from inspect import BoundArguments
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import anyio

from aqless import rules
from aqless._concurrency.task_groups import own_errors
from aqless._connection import cluster as _cluster
from aqless.client import Client
from aqless.models import (
    Durations,
    Page,
    QueueCounts,
    QueueStats,
    WorkerCounts,
    WorkerInfo,
    WorkerJobs,
)

if TYPE_CHECKING:
    from aqless.sharding.deployment import Deployment as ShardedClient

__all__ = [
    "ShardReport",
    "ShardedTags",
    "concatenated",
    "counted",
    "each_shard",
    "every_queue_counts",
    "gathered",
    "in_order",
    "interleaved",
    "merged_durations",
    "merged_page",
    "merged_stats",
    "names",
    "nothing",
    "one",
    "page_of",
    "pooled_stats",
    "primary_info",
    "queue_counts",
    "shard_reports",
    "summed",
    "summed_counts",
    "tracked_jobs",
    "unique",
    "united",
    "worker_counts",
    "worker_records",
    "workers_jobs",
]

K = TypeVar("K")
T = TypeVar("T")
X = TypeVar("X")


async def gathered(items: Sequence[X], read: Callable[[X], Awaitable[T]]) -> list[T]:
    """`read` of every item, all at once; the results in the items' order. A read that
    fails raises its own error (`own_errors`), and the reads still under way are
    cancelled."""
    results: dict[int, T] = {}

    async def one(index: int, item: X) -> None:
        results[index] = await read(item)

    with own_errors():
        async with anyio.create_task_group() as reads:
            for index, item in enumerate(items):
                reads.start_soon(one, index, item)
    return [results[index] for index in range(len(items))]


async def each_shard(clients: Sequence[Client], read: Callable[[Client], Awaitable[T]]) -> list[T]:
    """`read` of every shard's client, the shards asked at once; results in shard order."""
    return await gathered(clients, read)


def interleaved(lists: Iterable[Sequence[T]]) -> list[T]:
    """The first item of each list, then the second of each..., skipping exhausted lists."""
    lists = list(lists)
    longest = max((len(items) for items in lists), default=0)
    return [items[i] for i in range(longest) for items in lists if i < len(items)]


def unique(items: Iterable[T]) -> list[T]:
    return list(dict.fromkeys(items))


def merged_durations(parts: Sequence[Durations]) -> Durations:
    """One day's wait or run times over the shards: counts and histograms summed; mean and
    (sample) standard deviation as if measured at once (Chan et al.'s parallel Welford:
    M2 = sum of each part's M2 plus its count times its mean's squared distance from the
    overall mean)."""
    count = sum(part.count for part in parts)
    if count == 0:
        return Durations(count=0, mean=0.0, std=0.0, histogram=_summed_histograms(parts))
    mean = sum(part.count * part.mean for part in parts) / count
    m2 = sum(
        part.std**2 * (part.count - 1) + part.count * (part.mean - mean) ** 2
        for part in parts
        if part.count
    )
    std = math.sqrt(m2 / (count - 1)) if count > 1 else 0.0
    return Durations(count=count, mean=mean, std=std, histogram=_summed_histograms(parts))


def _summed_histograms(parts: Sequence[Durations]) -> tuple[int, ...]:
    width = max((len(part.histogram) for part in parts), default=0)
    return tuple(
        sum(part.histogram[i] for part in parts if i < len(part.histogram)) for i in range(width)
    )


def merged_stats(parts: Sequence[QueueStats]) -> QueueStats:
    """A queue's day of statistics over its partitions."""
    return QueueStats(
        wait=merged_durations([part.wait for part in parts]),
        run=merged_durations([part.run for part in parts]),
        failed=sum(part.failed for part in parts),
        failures=sum(part.failures for part in parts),
        retries=sum(part.retries for part in parts),
    )


# -- merges: a call's answer from its shards' answers (aqless.sharding.routing) -------------


def one(parts: Sequence[T], arguments: BoundArguments) -> T:
    """The answer of the one shard asked."""
    (answer,) = parts
    return answer


def nothing(parts: Sequence[None], arguments: BoundArguments) -> None:
    """No answer (a verb done on every shard)."""


def summed(parts: Sequence[int], arguments: BoundArguments) -> int:
    return sum(parts)


def concatenated(parts: Sequence[list[T]], arguments: BoundArguments) -> list[T]:
    return [item for part in parts for item in part]


def united(parts: Sequence[dict[K, T]], arguments: BoundArguments) -> dict[K, T]:
    """The shards' mappings as one (each key is on one shard)."""
    return {key: value for part in parts for key, value in part.items()}


def counted(parts: Sequence[dict[K, int]], arguments: BoundArguments) -> dict[K, int]:
    """Each key's counts summed over the shards."""
    totals: dict[K, int] = {}
    for part in parts:
        for key, count in part.items():
            totals[key] = totals.get(key, 0) + count
    return totals


def page_of(parts: Sequence[Sequence[T]], arguments: BoundArguments) -> list[T]:
    """`offset:offset + count` of the shards' listings interleaved (see the module's
    documentation)."""
    offset, count = arguments.arguments["offset"], arguments.arguments["count"]
    return interleaved(parts)[offset : offset + count]


def merged_page(parts: Sequence[Page], arguments: BoundArguments) -> Page:
    """A page over the shards: the interleaved jids, the totals summed."""
    jids = page_of([page.jids for page in parts], arguments)
    return Page(total=sum(page.total for page in parts), jids=tuple(jids))


def queue_counts(parts: Sequence[QueueCounts], arguments: BoundArguments) -> QueueCounts:
    """A queue's counts summed over its partitions (paused if any partition is)."""
    return summed_counts(parts[0].name, parts)


def summed_counts(name: str, counts: Sequence[QueueCounts]) -> QueueCounts:
    """One queue's counts over its partitions."""
    return QueueCounts(
        name=name,
        waiting=sum(c.waiting for c in counts),
        running=sum(c.running for c in counts),
        stalled=sum(c.stalled for c in counts),
        scheduled=sum(c.scheduled for c in counts),
        depends=sum(c.depends for c in counts),
        throttled=sum(c.throttled for c in counts),
        recurring=sum(c.recurring for c in counts),
        paused=any(c.paused for c in counts),
    )


class _Jid(Protocol):
    @property
    def jid(self) -> str: ...


J = TypeVar("J", bound=_Jid)


def in_order(parts: Sequence[Sequence[J]], arguments: BoundArguments) -> list[J]:
    """The jobs found, in the order their jids were asked."""
    found = {job.jid: job for part in parts for job in part}
    return [found[jid] for jid in arguments.arguments["jids"] if jid in found]


def tracked_jobs(
    parts: Sequence[tuple[list[T], list[str]]], arguments: BoundArguments
) -> tuple[list[T], list[str]]:
    """Every shard's tracked jobs, and the tracked jids whose jobs are gone."""
    return [job for jobs, _ in parts for job in jobs], unique(
        jid for _, gone in parts for jid in gone
    )


def names(parts: Sequence[list[str]], arguments: BoundArguments) -> list[str]:
    return unique(name for part in parts for name in part)


def every_queue_counts(
    parts: Sequence[list[QueueCounts]], arguments: BoundArguments
) -> list[QueueCounts]:
    by_name: dict[str, list[QueueCounts]] = {}
    for counts in (counts for part in parts for counts in part):
        by_name.setdefault(counts.name, []).append(counts)
    return [summed_counts(name, counts) for name, counts in by_name.items()]


def worker_counts(
    parts: Sequence[list[WorkerCounts]], arguments: BoundArguments
) -> list[WorkerCounts]:
    """Each worker (named alike on every shard) with its jobs and stalled jobs summed, in
    the interleaved order of the shards' lists (most recently active first)."""
    merged: dict[str, WorkerCounts] = {}
    for counts in interleaved(parts):
        seen = merged.get(counts.name)
        if seen is not None:
            counts = WorkerCounts(
                counts.name, seen.jobs + counts.jobs, seen.stalled + counts.stalled
            )
        merged[counts.name] = counts
    return list(merged.values())


def worker_records(
    parts: Sequence[dict[str, WorkerInfo]], arguments: BoundArguments
) -> dict[str, WorkerInfo]:
    """Each worker's records on the shards as one (a ShardedWorker's worker writes one on
    each)."""
    found: dict[str, WorkerInfo] = {}
    for records in parts:
        for name, info in records.items():
            found[name] = found[name].merged(info) if name in found else info
    return found


def workers_jobs(parts: Sequence[WorkerJobs], arguments: BoundArguments) -> WorkerJobs:
    return WorkerJobs(
        jobs=tuple(unique(jid for one in parts for jid in one.jobs)),
        stalled=tuple(unique(jid for one in parts for jid in one.stalled)),
    )


def pooled_stats(parts: Sequence[QueueStats], arguments: BoundArguments) -> QueueStats:
    """`merged_stats`: counts and histograms summed, mean and deviation exact."""
    return merged_stats(parts)


class ShardedTags:
    """The tags in use over the shards: ``client.tags.top()``."""

    def __init__(self, client: ShardedClient) -> None:
        self._client = client

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
    reports = await each_shard(clients, _report_parts)
    return [
        ShardReport(shard.id, shard.namespace, shard.state, node, queues, lag, memory)
        for shard, (node, queues, lag, memory) in zip(shards, reports, strict=True)
    ]


async def _report_parts(
    client: Client,
) -> tuple[str, tuple[QueueCounts, ...], float, int | None]:
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
    node, memory = await _primary_memory(client)
    return node, counts, max([0.0, *waited]), memory


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
