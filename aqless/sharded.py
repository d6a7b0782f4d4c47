"""A sharded deployment: one logical deployment spread over the primaries of a Cluster.

Each shard is a complete qless namespace with a hash tag of its own, on a primary of its
own (see aqless.shard_map), reached through a plain `Client` of that namespace. A
`ShardedClient` holds one such client per shard and routes:

- a put to the owner of its jid's bucket; a jid it makes up is drawn until it falls on the
  shard the put must go to: its dependencies' shard, its routing key's (``route=``, the
  owner of the key's bucket), its first throttle's, first rate limit's or dedup id's (the
  keeper of that name, `ShardMap.keeper`), its queue's if the queue is pinned, so that a
  throttle's maximum, a rate limit and a dedup id keep their meaning. Constraints that
  name two shards raise CrossShardError before anything is written;
- a verb on a jid to the shards its bucket's owners name (one while no shard was added),
  never to every shard;
- pops to every shard, the starting shard moving on at every call;
- configuration to every shard (read from the first); counts summed over the shards.

The map can change while clients run (aqless.shard_resize: shards added, drained,
forgotten; aqless.shard_changes: queues pinned): a client reads it again every `refresh`
seconds (at its next routed call) and at once when a jid is on none of the shards its map
names for it, the sign that the map it holds is older than the job.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from types import TracebackType
from typing import Any, Self

import anyio
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisClusterException
from redis.exceptions import TimeoutError as RedisTimeoutError

from aqless import shard_changes, shard_pubsub, shard_resize, shard_store
from aqless._connection import cluster as _cluster
from aqless._connection import urls
from aqless._connection.protocol import Clock
from aqless.client import Client, Throttle
from aqless.dedup import DedupOption, dedup_of
from aqless.durability import Durable
from aqless.errors import AqlessError, ConfigurationError, ConnectionLostError, CrossShardError
from aqless.job import Job, RecurringJob
from aqless.models import JobState, QueueCounts, ThrottleInfo
from aqless.queue import JobClass, PutRequest, Queue, checked_name, default_options
from aqless.ratelimits import RateLimit
from aqless.run_at import RunAt
from aqless.shard_map import ShardMap, checked_deployment, placed_namespaces
from aqless.sharded_events import MergedEventStream
from aqless.sharded_views import (
    MergedJobReads,
    MergedQueueReads,
    ShardedTags,
    ShardedWorkers,
    ShardReport,
    each_shard,
    shard_reports,
)

__all__ = [
    "AnyClient",
    "ShardedClient",
    "ShardedConfig",
    "ShardedJobs",
    "ShardedQueue",
    "ShardedQueues",
    "ShardedThrottles",
]

logger = logging.getLogger("aqless.sharded")

#: seconds between two readings of the shard map by a client (and a ShardedWorker)
REFRESH = 5.0
#: seconds a shard drains before it may be forgotten: more than clients take to notice
FORGET_GRACE = 3 * REFRESH


class ShardedClient:
    """A deployment spread over the primaries of a Redis or Valkey Cluster.

    ``ShardedClient(nodes, deployment="billing", shards=3)`` opens the deployment
    ``billing``, making it with 3 shards (each on its own primary where the Cluster has as
    many) if its shard map does not exist yet; later clients may leave `shards` out. Use it
    as ``async with`` (or ``await open()`` and ``await close()``).

    Args:
        nodes: a ``redis://`` URL of one node, a ``redis+cluster://`` URL, or (host, port)
            pairs; extra keywords go to ``redis.asyncio.cluster.RedisCluster``.
        deployment: the deployment's name (no braces).
        shards: the number of shards to make the deployment with; given for a deployment
            that exists, it must be its number of active shards (change it with
            `add_shards` and `remove_shard`).
        refresh: seconds between two readings of the shard map (at the next routed call).
        worker_name, clock, strict: as `Client`'s, for every shard's client.

    Raises:
        ConfigurationError: a bad name, count or address; at open, no such deployment and
            no `shards`, or a different count.
    """

    def __init__(
        self,
        nodes: str | Sequence[tuple[str, int]],
        *,
        deployment: str,
        shards: int | None = None,
        refresh: float = REFRESH,
        worker_name: str | None = None,
        clock: Clock = time.time,
        strict: bool = False,
        **connection_options: Any,
    ) -> None:
        self.deployment = checked_deployment(deployment)
        if shards is not None and (type(shards) is not int or shards < 1):
            raise ConfigurationError(f"shards must be a whole number >= 1, got {shards!r}")
        if not refresh > 0:
            raise ConfigurationError(
                f"refresh must be a positive number of seconds, got {refresh!r}"
            )
        self._wanted = shards
        self.refresh = refresh
        self._read_at = float("-inf")
        self._reading = anyio.Lock()  # one reading of the map at a time
        self.clock = clock
        self._worker_name = worker_name
        self._strict = strict
        if isinstance(nodes, str) and urls.scheme_of(nodes) == urls.CLUSTER:
            url = urls.parse(nodes)
            nodes = url.hosts
            for option in ("username", "password"):
                if getattr(url, option) is not None:
                    connection_options[option] = getattr(url, option)
        try:
            self.redis = _cluster.connect(nodes, **connection_options)
        except ValueError as error:
            raise ConfigurationError(f"bad cluster address {nodes!r}: {error}") from error
        self._map: ShardMap | None = None
        self._adopted: anyio.Event | None = None  # set at the next newer map
        self._clients: dict[int, Client] = {}
        self._turn = 0
        self.queues = ShardedQueues(self)
        self.jobs = ShardedJobs(self)
        self.config = ShardedConfig(self)
        self.throttles = ShardedThrottles(self)
        self.workers = ShardedWorkers(self)
        self.tags = ShardedTags(self)

    # -- opening ------------------------------------------------------------------------------

    async def open(self) -> Self:
        """Read the shard map (making it if the deployment is new), then open every
        shard's client."""
        try:
            try:
                await self.redis.initialize()
                shard_map = await self._read_or_make_map()
            except (RedisConnectionError, RedisTimeoutError, RedisClusterException) as error:
                raise ConnectionLostError(f"reading the shard map: {error}") from error
            if self._wanted is not None and self._wanted != len(shard_map.active):
                raise ConfigurationError(
                    f"the deployment {self.deployment!r} has {len(shard_map.active)} shards, "
                    f"not {self._wanted}; change it with add_shards or remove_shard"
                )
            await self._adopt(shard_map)
        except BaseException:
            await self.close()
            raise
        return self

    async def _read_or_make_map(self) -> ShardMap:
        stored = await shard_store.read(self.redis, self.deployment)
        if stored is not None:
            return stored
        if self._wanted is None:
            raise ConfigurationError(
                f"no sharded deployment {self.deployment!r} on this cluster; give "
                "shards=N to make it"
            )
        namespaces = placed_namespaces(
            self.deployment, self._wanted, self._primary_of, self._primaries()
        )
        await shard_pubsub.mark(self.redis, namespaces)  # before any client learns of them
        return await shard_store.made(self.redis, self.deployment, ShardMap.first(namespaces))

    def _primaries(self) -> list[str]:
        return [node.name for node in self.redis.get_primaries()]

    async def _adopt(self, shard_map: ShardMap) -> None:
        """Hold `shard_map` (unless the one held is newer), opening a client for each
        shard not seen before (a forgotten shard's client stays open until close: its
        worker may still be reporting)."""
        self._read_at = time.monotonic()
        if self._map is not None and shard_map.version <= self._map.version:
            return
        for shard in shard_map.shards:
            if shard.id not in self._clients:
                sharded = await shard_pubsub.publishes_sharded(self.redis, shard.namespace)
                client = Client(
                    redis=self.redis,
                    namespace=shard.namespace,
                    worker_name=self._worker_name,
                    clock=self.clock,
                    strict=self._strict,
                    sharded_pubsub=sharded,
                )
                self._clients[shard.id] = client
                await client.open()
        self._map = shard_map
        adopted, self._adopted = self._adopted, None
        if adopted is not None:
            adopted.set()

    # -- the map changing -----------------------------------------------------------------------

    async def reread(self) -> bool:
        """Read the shard map again; whether it changed since this client last read it
        (or since a reading that was under way when this was called)."""
        before = self.shards.version
        async with self._reading:
            if self.shards.version != before:  # another task just read a newer map
                return True
            try:
                stored = await shard_store.read(self.redis, self.deployment)
            except (RedisConnectionError, RedisTimeoutError, RedisClusterException) as error:
                raise ConnectionLostError(f"reading the shard map: {error}") from error
            if stored is None:
                raise ConfigurationError(f"the shard map of {self.deployment!r} is gone")
            await self._adopt(stored)
        return self.shards.version != before

    async def fresh(self) -> ShardMap:
        """The shard map, read again first if it was read `refresh` seconds ago or more;
        the map held if it cannot be read now (the node holding it may be failing over:
        puts to the other shards go on), tried again `refresh` seconds later."""
        if time.monotonic() - self._read_at >= self.refresh:
            try:
                await self.reread()
            except ConnectionLostError as error:
                self._read_at = time.monotonic()
                logger.warning(
                    "cannot read the shard map again (%s); using version %s",
                    error,
                    self.shards.version,
                )
        return self.shards

    async def add_shards(self, count: int = 1) -> ShardMap:
        """Add `count` shards to the live deployment, each on a primary holding the
        fewest: a new generation gives them about count/(N+count) of the buckets, taken
        evenly from the N active shards. New puts use the new owners; jobs already put
        stay where they are and are found there. Two clients adding at once both land.
        Returns the new map (this client holds it at once; others within `refresh`)."""
        before = self.shards.active
        changed = await shard_resize.add(
            self.redis, self.deployment, count, self._primary_of, self._primaries()
        )
        await self._adopt(changed)
        source = self._clients[before[0].id]
        for shard in changed.shards:
            if shard.id > before[-1].id:  # the configuration holds on every shard
                await shard_resize.copy_config(source, self._clients[shard.id])
        return self.shards

    async def remove_shard(self, shard_id: int) -> ShardMap:
        """Start draining shard `shard_id`: a new generation gives its buckets to the
        other active shards, so no new job goes to it; workers keep taking its jobs and
        lookups still find them. `forget_shard` it once it is empty.

        Raises:
            ConfigurationError: no such shard, the last active one, or it holds a
                pinned queue."""
        await self._adopt(
            await shard_resize.drain(self.redis, self.deployment, shard_id, time.time())
        )
        return self.shards

    async def forget_shard(self, shard_id: int, *, grace: float = FORGET_GRACE) -> ShardMap:
        """Drop a drained shard from the map: its namespace is no longer read or popped.

        Raises:
            ShardNotEmptyError: it still holds jobs (waiting, running, scheduled,
                dependent, throttled, recurring or failed), or has drained for less than
                `grace` seconds (clients may still put there by an older map).
            ConfigurationError: no such shard, or it is not draining.
        """
        await self.reread()
        if shard_id not in self._clients:
            raise ConfigurationError(f"no shard {shard_id} in this deployment")
        changed = await shard_resize.forget(
            self.redis,
            self.deployment,
            self._clients[shard_id],
            shard_id,
            time.time(),
            grace,
        )
        await self._adopt(changed)
        return self.shards

    async def pin(self, queue: str) -> int:
        """Pin `queue` to one shard (the owner of its name's bucket, unless it is pinned
        already): every put of it goes there, so its own throttle and rate limit, kept
        there, mean what they say. Returns the shard."""
        changed = await shard_store.changed(
            self.redis, self.deployment, lambda current: shard_changes.pinned(current, queue)
        )
        await self._adopt(changed)
        return changed.pinned[queue]

    def _primary_of(self, namespace: str) -> str:
        node = self.redis.get_node_from_key(f"{namespace}:ql:")
        if node is None:
            raise ConfigurationError(f"no primary serves the slot of {namespace!r}")
        return str(node.name)

    async def close(self) -> None:
        """Close every shard's client and the Cluster connections (idempotent)."""
        for client in self._clients.values():
            await client.close()
        with anyio.move_on_after(5, shield=True):
            await self.redis.aclose()

    async def __aenter__(self) -> Self:
        return await self.open()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    # -- the shards ---------------------------------------------------------------------------

    @property
    def shards(self) -> ShardMap:
        """The shard map, as read when the client opened."""
        if self._map is None:
            raise ConfigurationError("open the ShardedClient first (async with, or open())")
        return self._map

    @property
    def map_adopted(self) -> anyio.Event:
        """An event set once this client holds a newer shard map than now (a new one is
        made for the map after)."""
        if self._adopted is None:
            self._adopted = anyio.Event()
        return self._adopted

    @property
    def worker_name(self) -> str:
        return self.shard(self.shards.shards[0].id).worker_name

    def shard(self, shard_id: int) -> Client:
        """The client of one shard: a plain Client of its namespace."""
        self.shards.shard(shard_id)  # refused before open, KeyError for no such shard
        return self._clients[shard_id]

    @property
    def clients(self) -> list[Client]:
        """The clients of the shards (active and draining: jobs are taken from both),
        by shard id."""
        return [self._clients[shard.id] for shard in self.shards.shards]

    def shard_of(self, key: str) -> int:
        """The shard a put of this jid (or routing key) goes to: the owner of its bucket
        in the newest generation."""
        return self.shards.owner(key)

    def keeper_of(self, name: str) -> int:
        """The shard keeping a named throttle, rate limit or dedup id, where the jobs
        naming it first are put (`ShardMap.keeper`: the shard that had it before shards
        were added)."""
        return self.shards.keeper(name)

    def _rotation(self) -> list[int]:
        """The shards' ids (active and draining), starting one further at every call."""
        ids = [shard.id for shard in self.shards.shards]
        start = self._turn % len(ids)
        self._turn += 1
        return ids[start:] + ids[:start]

    def _new_jid(self, shard_id: int | None) -> str:
        """A random jid (a UUID4's hex) that a lookup finds on `shard_id` (any shard when
        None), drawn again until it does: its bucket's newest owner is `shard_id`, or, for
        a shard that owns no bucket now (a job joining its dependencies there), one of its
        owners over the generations is. N draws on average."""
        generations = self.shards.generations
        if shard_id is not None and not any(shard_id in owners for owners in generations):
            raise ConfigurationError(f"shard {shard_id} owns no bucket in any generation")
        owns_now = shard_id in generations[-1]
        while True:
            jid = uuid.uuid4().hex
            if shard_id is None:
                return jid
            if owns_now and self.shards.owner(jid) == shard_id:
                return jid
            if not owns_now and shard_id in self.shards.candidates(jid):
                return jid

    async def locate(self, jid: str) -> int | None:
        """The shard holding the job (or recurring job) `jid`, asking only the shards its
        bucket names; None if none has it."""
        found = await self.find(jid)
        return None if found is None else found[0]

    async def find(self, jid: str) -> tuple[int, Job | RecurringJob] | None:
        """The job (or recurring job) `jid` and its shard, asking only the shards its
        bucket names; when none has it, the map is read again and, if it changed, the
        shards it names now are asked (the job may be on a shard this map did not know)."""
        asked: set[int] = set()
        for _ in range(2):
            for shard_id in self.shards.candidates(jid):
                if shard_id in asked:
                    continue
                asked.add(shard_id)
                found = await self._clients[shard_id].jobs.get(jid)
                if found is not None:
                    return shard_id, found
            if not await self.reread():
                break
        return None

    async def home_shard(self, jid: str) -> int:
        """The shard that holds `jid`, else the one a put of it goes to; no I/O while no
        shard was added (its bucket has one owner)."""
        candidates = (await self.fresh()).candidates(jid)
        if len(candidates) > 1:
            found = await self.locate(jid)
            if found is not None:
                return found
        return self.shards.candidates(jid)[0]

    async def home(self, jid: str) -> Client:
        """The client of `home_shard(jid)`."""
        return self._clients[await self.home_shard(jid)]

    async def wait(self, jid: str, *, timeout: float | None = None) -> JobState | None:
        """`Client.wait` on the job's shard."""
        return await (await self.home(jid)).wait(jid, timeout=timeout)

    async def result(self, jid: str, *, timeout: float | None = None) -> Any:
        """`Client.result` on the job's shard."""
        return await (await self.home(jid)).result(jid, timeout=timeout)

    def events(self, *channels: str, workers: Sequence[str] = ()) -> MergedEventStream:
        """`Client.events` of every shard, merged into one stream that follows the map: a
        shard added is heard once this client reads the map that names it (at most
        `refresh` seconds later), a forgotten one is left (aqless.sharded_events)."""
        return MergedEventStream(self, *channels, workers=workers)

    async def shard_report(self) -> list[ShardReport]:
        """Each shard's queue counts, lag and primary's memory (aqless.sharded_views)."""
        return await shard_reports(self)

    def __repr__(self) -> str:
        count = "?" if self._map is None else len(self._map.active)
        return f"<ShardedClient {self.deployment} {count} shards>"


@dataclass(frozen=True, slots=True)
class _Placement:
    shard: int
    jid: str


class ShardedQueue(MergedQueueReads):
    """A queue of a sharded deployment: its partitions, one per shard (no I/O to make)."""

    def __init__(self, client: ShardedClient, name: str) -> None:
        self._client = client
        self.name = checked_name(name)

    def __repr__(self) -> str:
        return f"<ShardedQueue {self.name}>"

    def partition(self, shard_id: int) -> Queue:
        """The queue on one shard."""
        return self._client.shard(shard_id).queues[self.name]

    @property
    def partitions(self) -> list[Queue]:
        return [client.queues[self.name] for client in self._client.clients]

    # -- putting ------------------------------------------------------------------------------

    async def _place(
        self,
        klass: JobClass,
        data: Any,
        jid: str | None,
        route: str | None,
        depends: Sequence[str] | None,
        throttles: Sequence[str] | None,
        rate_limits: Sequence[str] | None,
        dedup: DedupOption,
    ) -> _Placement:
        """Which shard the put goes to, and its jid; CrossShardError if its constraints
        name two shards."""
        defaults = {} if isinstance(klass, str) else default_options(klass, data)
        jid = jid or defaults.get("jid")
        depends = depends if depends is not None else defaults.get("depends")
        throttles = throttles if throttles is not None else defaults.get("throttles")
        rate_limits = rate_limits if rate_limits is not None else defaults.get("rate_limits")
        shard_map = await self._client.fresh()
        deduplicated = dedup_of(dedup)
        named: dict[str, int] = {}
        pin = shard_map.pin_of(self.name)
        if pin is not None:
            named[f"pinned queue {self.name!r}"] = pin
        for dependency in depends or ():
            named[f"dependency {dependency!r}"] = await self._client.home_shard(dependency)
        if route:
            named[f"routing key {route!r}"] = shard_map.owner(route)
        for what, key in (
            ("first throttle", (throttles or [None])[0]),
            ("first rate limit", (rate_limits or [None])[0]),
            ("dedup id", None if deduplicated is None else deduplicated.id),
        ):
            if key:
                named[f"{what} {key!r}"] = shard_map.keeper(key)
        if len(set(named.values())) > 1:
            raise _cross_shard(named)
        shard = next(iter(named.values()), None)
        if not jid:
            jid = self._client._new_jid(shard)
            return _Placement(shard_map.owner(jid) if shard is None else shard, jid)
        # a given jid: the shard holding its job, else any shard its bucket names
        candidates = shard_map.candidates(jid)
        found = await self._client.locate(jid) if len(candidates) > 1 else candidates[0]
        allowed = candidates if found is None else [found]
        if shard is not None and shard not in allowed:
            raise _cross_shard({**named, f"jid {jid!r}": allowed[0]})
        return _Placement(allowed[0] if shard is None else shard, jid)

    async def put(
        self,
        klass: JobClass,
        data: Any = None,
        *,
        route: str | None = None,
        jid: str | None = None,
        priority: float | None = None,
        delay: float | None = None,
        tags: Sequence[str] | None = None,
        retries: int | None = None,
        depends: Sequence[str] | None = None,
        throttles: Sequence[str] | None = None,
        dedup: DedupOption = None,
        rate_limits: Sequence[str] | None = None,
        at: RunAt | None = None,
        requeue: bool = False,
        durable: Durable = False,
    ) -> str:
        """`Queue.put` on the shard the job belongs to (see the module's documentation);
        returns its jid. Jobs put with the same `route` (a routing key such as a customer
        id) go to one shard, so they keep their order.

        Raises:
            CrossShardError: the dependencies, jid, route, first throttle, first rate
                limit or dedup id name different shards (nothing is put).
        """
        place = await self._place(klass, data, jid, route, depends, throttles, rate_limits, dedup)
        return await self.partition(place.shard).put(
            klass,
            data,
            jid=place.jid,
            priority=priority,
            delay=delay,
            tags=tags,
            retries=retries,
            depends=depends,
            throttles=throttles,
            dedup=dedup,
            rate_limits=rate_limits,
            at=at,
            requeue=requeue,
            durable=durable,
        )

    async def put_many(
        self,
        requests: Iterable[PutRequest],
        *,
        route: str | None = None,
        batch: int = 1000,
        durable: Durable = False,
    ) -> list[str]:
        """`Queue.put_many` over the shards: every request is placed first (a
        CrossShardError puts nothing), then each shard's share is put, the shards at
        once. `route` applies to every request. A refusal is raised once every shard's
        share has been sent, as `Queue.put_many` does."""
        placed: list[tuple[int, PutRequest]] = []
        for request in requests:
            place = await self._place(
                request.klass,
                request.data,
                request.jid,
                route,
                request.depends,
                request.throttles,
                request.rate_limits,
                request.dedup,
            )
            placed.append((place.shard, replace(request, jid=place.jid)))
        by_shard: dict[int, list[int]] = {}
        for index, (shard, _) in enumerate(placed):
            by_shard.setdefault(shard, []).append(index)
        jids: list[str | None] = [None] * len(placed)
        refusals: list[AqlessError] = []

        async def put_share(shard: int, indexes: list[int]) -> None:
            share = [placed[index][1] for index in indexes]
            try:
                put = await self.partition(shard).put_many(share, batch=batch, durable=durable)
            except AqlessError as refusal:
                refusals.append(refusal)
                return
            for index, jid in zip(indexes, put, strict=True):
                jids[index] = jid

        async with anyio.create_task_group() as shares:
            for shard, indexes in by_shard.items():
                shares.start_soon(put_share, shard, indexes)
        if refusals:
            raise refusals[0]
        return [jid for jid in jids if jid is not None]

    async def recur(
        self,
        klass: JobClass,
        data: Any = None,
        interval: float | None = None,
        *,
        jid: str | None = None,
        throttles: Sequence[str] | None = None,
        **options: Any,
    ) -> str:
        """`Queue.recur` on the shard of the recurring job's jid (its spawned jobs are put
        there); a template naming throttles goes to its first throttle's shard."""
        place = await self._place(klass, data, jid, None, None, throttles, None, None)
        return await self.partition(place.shard).recur(
            klass, data, interval, jid=place.jid, throttles=throttles, **options
        )

    # -- taking -------------------------------------------------------------------------------

    async def pop_many(self, count: int, *, worker: str | None = None) -> list[Job]:
        """Up to `count` jobs from every shard: the count is shared out among the shards
        (the first shard moving on at every call), asked at once, and what a shard did
        not have is asked of the shards that filled their share, in turn."""
        if count <= 0:
            return []
        order = self._client._rotation()
        shares = [count // len(order) + (i < count % len(order)) for i in range(len(order))]
        popped: dict[int, list[Job]] = {}

        async def pop_share(shard: int, share: int) -> None:
            popped[shard] = await self.partition(shard).pop_many(share, worker=worker)

        async with anyio.create_task_group() as pops:
            for shard, share in zip(order, shares, strict=True):
                if share:
                    pops.start_soon(pop_share, shard, share)
        jobs = [job for shard in order for job in popped.get(shard, [])]
        for shard, share in zip(order, shares, strict=True):
            if len(jobs) >= count:
                break
            if len(popped.get(shard, [])) >= share:  # it may have more
                jobs += await self.partition(shard).pop_many(count - len(jobs), worker=worker)
        return jobs

    async def pop(self, *, worker: str | None = None) -> Job | None:
        """The next job from the shards, starting one shard further at every call."""
        for shard in self._client._rotation():
            jobs = await self.partition(shard).pop_many(1, worker=worker)
            if jobs:
                return jobs[0]
        return None

    # -- looking ------------------------------------------------------------------------------

    async def counts(self) -> QueueCounts:
        """The queue's counts summed over the shards (paused if any partition is)."""
        return summed(self.name, [await queue.counts() for queue in self.partitions])

    async def length(self) -> int:
        """Waiting, scheduled and running jobs on every shard."""
        return sum([await queue.length() for queue in self.partitions])

    async def pause(self, *, stopjobs: bool = False) -> list[str]:
        """`Queue.pause` on every shard; the jids timed out."""
        return [jid for queue in self.partitions for jid in await queue.pause(stopjobs=stopjobs)]

    async def unpause(self) -> None:
        """`Queue.unpause` on every shard."""
        for queue in self.partitions:
            await queue.unpause()

    # -- its own throttle and rate limit: on the shard it is pinned to ------------------------

    def _home(self) -> Queue:
        """The partition where the queue's own throttle and rate limit live: its pinned
        shard, else the keeper of its name (where pinning it would put it)."""
        shards = self._client.shards
        pin = shards.pin_of(self.name)
        return self.partition(shards.keeper(self.name) if pin is None else pin)

    async def set_throttle(self, maximum: int) -> None:
        """Pin the queue to one shard (`ShardedClient.pin`), then let at most `maximum` of
        its jobs run at once (0: unlimited): every job put from now on goes there, so the
        maximum holds over the deployment."""
        await self._client.pin(self.name)
        await self._home().set_throttle(maximum)

    async def throttle(self) -> ThrottleInfo:
        """The queue's own throttle, on its pinned shard."""
        return await self._home().throttle()

    async def set_rate_limit(self, limit: int | None, *, per: float = 1.0) -> None:
        """Pin the queue to one shard (`ShardedClient.pin`), then start at most `limit` of
        its jobs in any `per` seconds (None lifts the limit)."""
        await self._client.pin(self.name)
        await self._home().set_rate_limit(limit, per=per)

    @property
    def rate_limit(self) -> RateLimit:
        """The queue's own rate limit, on its pinned shard (no I/O)."""
        return self._home().rate_limit


def _cross_shard(named: dict[str, int]) -> CrossShardError:
    detail = ", ".join(f"{what} on shard {shard}" for what, shard in named.items())
    return CrossShardError(
        "queue.put", f"a job lives on one shard, but its {detail}; nothing was put"
    )


def summed(name: str, counts: Sequence[QueueCounts]) -> QueueCounts:
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


class ShardedQueues:
    """``client.queues[name]`` (no I/O), and the queues over every shard."""

    def __init__(self, client: ShardedClient) -> None:
        self._client = client

    def __getitem__(self, name: str) -> ShardedQueue:
        return ShardedQueue(self._client, name)

    async def names(self) -> list[str]:
        """The queues any shard knows."""
        names: dict[str, None] = {}
        for some in await each_shard(self._client.clients, lambda c: c.queues.names()):
            names.update(dict.fromkeys(some))
        return list(names)

    async def counts(self) -> list[QueueCounts]:
        """Every queue's counts, summed over the shards."""
        by_name: dict[str, list[QueueCounts]] = {}
        for some in await each_shard(self._client.clients, lambda c: c.queues.counts()):
            for counts in some:
                by_name.setdefault(counts.name, []).append(counts)
        return [summed(name, counts) for name, counts in by_name.items()]


class ShardedJobs(MergedJobReads):
    """Jobs by id: each asked only of the shards its bucket names."""

    def __init__(self, client: ShardedClient) -> None:
        self._client = client

    async def get(self, jid: str) -> Job | RecurringJob | None:
        """The job or recurring job with this id, or None."""
        found = await self._client.find(jid)
        return None if found is None else found[1]

    async def get_many(self, jids: Sequence[str]) -> list[Job]:
        """The jobs that exist among `jids`, in order (missing ones are skipped)."""
        by_shard: dict[int, list[str]] = {}
        for jid in jids:
            by_shard.setdefault(await self._client.home_shard(jid), []).append(jid)
        found: dict[str, Job] = {}
        for shard, some in by_shard.items():  # one call per shard
            found.update(
                (job.jid, job) for job in await self._client.shard(shard).jobs.get_many(some)
            )
        return [found[jid] for jid in jids if jid in found]

    async def cancel(self, *jids: str) -> None:
        """Cancel jobs, one call per shard holding some of them (jobs that depend on each
        other are on one shard, so they are cancelled together)."""
        by_shard: dict[int, list[str]] = {}
        for jid in jids:
            by_shard.setdefault(await self._client.home_shard(jid), []).append(jid)
        for shard, some in by_shard.items():
            await self._client.shard(shard).jobs.cancel(*some)


class ShardedConfig:
    """The deployment's settings: written to every shard, read from the first."""

    def __init__(self, client: ShardedClient) -> None:
        self._client = client

    async def get(self, option: str) -> str | None:
        return await self._client.clients[0].config.get(option)

    async def all(self) -> dict[str, str]:
        return await self._client.clients[0].config.all()

    async def set(self, option: str, value: str | float) -> None:
        for client in self._client.clients:
            await client.config.set(option, value)

    async def unset(self, option: str) -> None:
        for client in self._client.clients:
            await client.config.unset(option)


class ShardedThrottles:
    """``client.throttles[name]``: the throttle on the shard keeping its name
    (`ShardedClient.keeper_of`), where every job naming it first is put."""

    def __init__(self, client: ShardedClient) -> None:
        self._client = client

    def __getitem__(self, name: str) -> Throttle:
        return Throttle(self._client.shard(self._client.keeper_of(name)), name)


#: A plain or a sharded deployment's client: what the CLI and the dashboard take.
AnyClient = Client | ShardedClient
