"""A sharded deployment: one logical deployment spread over the primaries of a Cluster.

Each shard is a complete qless namespace with a hash tag of its own, on a primary of its
own (see aqless.sharding.map), reached through a plain `Client` of that namespace. A
`ShardedClient` holds one such client per shard and routes:

- a put to the owner of its jid's bucket; a jid it makes up is drawn until it falls on the
  shard the put must go to: its dependencies' shard, its routing key's (``route=``, the
  owner of the key's bucket), its throttles', rate limits' or dedup id's (the keeper of
  each name, `ShardMap.keeper`), its queue's if the queue is pinned, so that a
  throttle's maximum, a rate limit and a dedup id keep their meaning. Constraints that
  name two shards raise CrossShardError before anything is written;
- a verb on a jid to the shards its bucket's owners name (one while no shard was added),
  never to every shard;
- pops to every shard, the starting shard moving on at every call;
- configuration to every shard (read from the first); counts summed over the shards.

The map can change while clients run (aqless.sharding.resize: shards added, drained,
forgotten; aqless.sharding.changes: queues pinned): a client reads it again every `refresh`
seconds (at its next routed call) and at once when a jid is on none of the shards its map
names for it, the sign that the map it holds is older than the job.
"""

from __future__ import annotations

import logging
import os
import time
import uuid
from collections.abc import Sequence
from types import TracebackType
from typing import Any, ClassVar, Literal, Self

import anyio

from aqless import codecs
from aqless._connection import cluster as _cluster
from aqless._connection import urls
from aqless._connection.lifecycle import ClientState, Lifecycle
from aqless._connection.protocol import Clock
from aqless.batches.sharded import ShardedBatches
from aqless.client import Client, ShardedConfig, ShardedJobs, ShardedTags, ShardedWorkers
from aqless.codecs import PayloadCodec
from aqless.contracts.derived import ShardedClientRouted
from aqless.errors import ConfigurationError, ConnectionLostError
from aqless.events.sharded import MergedEventStream
from aqless.flows.sharded import ShardedFlows
from aqless.job import Job, RecurringJob
from aqless.limits import ShardedRateLimits, ShardedThrottles
from aqless.patterns import ShardedQueuePatterns
from aqless.sharding import changes as shard_changes
from aqless.sharding import pubsub as shard_pubsub
from aqless.sharding import resize as shard_resize
from aqless.sharding import store as shard_store
from aqless.sharding.map import ShardMap, checked_deployment, placed_namespaces
from aqless.sharding.members import mark_shard
from aqless.sharding.queue import ShardedPutHook, ShardedQueues
from aqless.sharding.reads import ShardReport, shard_reports
from aqless.sharding.spool import ShardedSpool

__all__ = ["AnyClient", "ShardedClient"]

logger = logging.getLogger("aqless.sharding.client")

#: seconds between two readings of the shard map by a client (and a ShardedWorker)
REFRESH = 5.0
#: seconds a shard drains before it may be forgotten: more than clients take to notice
FORGET_GRACE = 3 * REFRESH


class ShardedClient(ShardedClientRouted):
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
        worker_name: as `Client`'s, for every shard's client.
        clock: as `Client`'s, for every shard's client.
        strict: as `Client`'s, for every shard's client.
        codec: as `Client`'s (aqless.codecs), for every shard's client: what job data,
            results, checkpoints and signals are stored through (default: the one
            ``AQLESS_KEYS`` and ``AQLESS_BLOB_DIR`` describe, if any).

    Raises:
        ConfigurationError: a bad name, count or address; at open, no such deployment and
            no `shards`, or a different count.

    Examples:
        ```python
        client = aqless.ShardedClient("redis+cluster://node-1:7000", deployment="billing")
        async with client:
            await client.queues["invoices"].put("billing.Invoice", {"id": 7})
        ```
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
        codec: PayloadCodec | None = None,
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
        #: What every shard's client stores payloads through (aqless.codecs).
        self.codec: PayloadCodec | None = codec or codecs.from_environment()
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
        self._lifecycle = Lifecycle("this ShardedClient")
        self._map: ShardMap | None = None
        self._adopted: anyio.Event | None = None  # set at the next newer map
        self._clients: dict[int, Client] = {}
        self._turn = 0
        self.queues = ShardedQueues(self)
        self.jobs = ShardedJobs(self)
        self.batches = ShardedBatches(self)

        self.flows = ShardedFlows(self)
        self.config = ShardedConfig(self)
        self.throttles = ShardedThrottles(self)
        self.rate_limits = ShardedRateLimits(self)
        self.queue_patterns = ShardedQueuePatterns(self)
        #: Hooks around every put and put_many of this client's queues, applied once per
        #: call before the jobs are placed (as a plain Client's, given the ShardedQueue).
        self.put_hooks: list[ShardedPutHook] = []
        self.workers = ShardedWorkers(self)
        self.tags = ShardedTags(self)
        self._spools: list[ShardedSpool] = []  # flushing while the client is open (see spool)

    # -- opening ------------------------------------------------------------------------------

    async def open(self) -> Self:
        """Read the shard map (making it if the deployment is new), then open every
        shard's client. ClientClosedError once the client was closed; a failed open
        releases what it opened, and may be tried again.

        Raises:
            ConfigurationError: no such deployment and no `shards`, or another number of
                active shards than `shards`.
            ConnectionLostError: the Cluster cannot be reached or cannot serve now.
            ClientClosedError: the client was closed.

        Examples:
            ```python
            client = await aqless.ShardedClient(nodes, deployment="billing", shards=3).open()
            ```
        """
        self._lifecycle.check_usable()
        try:
            with _cluster.calls("reading the shard map"):
                await self.redis.initialize()
                shard_map = await self._read_or_make_map()
            if self._wanted is not None and self._wanted != len(shard_map.active):
                raise ConfigurationError(
                    f"the deployment {self.deployment!r} has {len(shard_map.active)} shards, "
                    f"not {self._wanted}; change it with add_shards or remove_shard"
                )
            with _cluster.calls("opening the shards"):
                await self._adopt(shard_map)
        except BaseException:
            opened, self._clients, self._map = self._clients, {}, None
            await self._release(opened)
            raise
        self._lifecycle.opened()
        for spool in self._spools:
            spool.start()
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
                    codec=self.codec,
                )
                mark_shard(client)
                self._clients[shard.id] = client
                await client.open()
        self._map = shard_map
        adopted, self._adopted = self._adopted, None
        if adopted is not None:
            adopted.set()

    # -- the map changing -----------------------------------------------------------------------

    async def reread_map(self) -> bool:
        """Read the shard map again; whether it changed since this client last read it
        (or since a reading that was under way when this was called).

        Raises:
            ConfigurationError: the deployment's shard map is gone.
            ConnectionLostError: the node holding the map cannot be reached.
            ClientClosedError: the client was closed.

        Examples:
            ```python
            if await client.reread_map():
                print("now version", client.shards.version)
            ```
        """
        self._lifecycle.check_usable()
        before = self.shards.version
        async with self._reading:
            if self.shards.version != before:  # another task just read a newer map
                return True
            with _cluster.calls("reading the shard map"):
                stored = await shard_store.read(self.redis, self.deployment)
                if stored is None:
                    raise ConfigurationError(f"the shard map of {self.deployment!r} is gone")
                await self._adopt(stored)  # a new shard's pub/sub setting is read too
        return self.shards.version != before

    async def current_map(self) -> ShardMap:
        """The shard map, read again first if it was read `refresh` seconds ago or more;
        the map held if it cannot be read now (the node holding it may be failing over:
        puts to the other shards go on), tried again `refresh` seconds later.
        ClientClosedError once the client was closed.

        Examples:
            ```python
            shard_map = await client.current_map()
            print(shard_map.version, [shard.id for shard in shard_map.active])
            ```
        """
        self._lifecycle.check_usable()
        if time.monotonic() - self._read_at >= self.refresh:
            try:
                await self.reread_map()
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
        Returns the new map (this client holds it at once; others within `refresh`).

        Args:
            count: shards to add, a whole number from 1 (default 1).

        Raises:
            ConfigurationError: `count` is not a whole number from 1, or the map kept
                changing under it (try again).
            ConnectionLostError: the Cluster cannot be reached or cannot serve now.

        Examples:
            ```python
            shard_map = await client.add_shards(2)
            ```
        """
        before = self.shards.active
        with _cluster.calls("adding shards"):
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

        Args:
            shard_id: the shard's id (`Shard.id`).

        Raises:
            ConfigurationError: no such shard, the last active one, or it holds a
                pinned queue.

        Examples:
            ```python
            await client.remove_shard(2)  # then forget_shard(2) once it is empty
            ```
        """
        with _cluster.calls("draining a shard"):
            await self._adopt(
                await shard_resize.drain(self.redis, self.deployment, shard_id, time.time())
            )
        return self.shards

    async def forget_shard(self, shard_id: int, *, grace: float = FORGET_GRACE) -> ShardMap:
        """Drop a drained shard from the map: its namespace is no longer read or popped.

        Args:
            shard_id: the drained shard's id.
            grace: seconds the shard must have drained for (default 15: three times the
                default `refresh`), so that no client still puts there by an older map.

        Raises:
            ShardNotEmptyError: it still holds jobs (waiting, running, scheduled,
                dependent, throttled, recurring or failed), or has drained for less than
                `grace` seconds (clients may still put there by an older map).
            ConfigurationError: no such shard, or it is not draining.

        Examples:
            ```python
            await client.forget_shard(2)
            ```
        """
        await self.reread_map()
        if shard_id not in self._clients:
            raise ConfigurationError(f"no shard {shard_id} in this deployment")
        with _cluster.calls("forgetting a shard"):
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
        """Pin `queue` to one shard (the keeper of its name, `ShardMap.keeper`, unless it
        is pinned already): every put of it goes there, so its own throttle and rate limit,
        kept there, mean what they say. Returns the shard.

        Raises:
            ConfigurationError: the map kept changing under it (try again).

        Examples:
            ```python
            shard_id = await client.pin("invoices")
            await client.queues["invoices"].set_throttle(5)  # one maximum over the queue
            ```
        """
        with _cluster.calls("pinning a queue"):
            changed = await shard_store.changed(
                self.redis, self.deployment, lambda current: shard_changes.pinned(current, queue)
            )
            await self._adopt(changed)
        return changed.pinned[queue]

    def spool(
        self,
        *,
        capacity: int = 10_000,
        path: str | os.PathLike[str] | None = None,
        dedup_ttl: float = 86_400.0,
        batch: int = 500,
    ) -> ShardedSpool:
        """A spool for this client's puts while a shard cannot be reached (reliable push,
        as ``aqless.Client.spool``): ``await spool.put("emails", Send, data)`` places the
        put on its shard and puts it there, or keeps it for that shard and says so
        (`aqless.PutReceipt`). One spool holds every shard's puts; each shard's are sent,
        in order and each once, when it answers again, by a task that starts and stops
        with the client; puts placed on the shards that answer go straight to them. See
        `aqless.ShardedSpool` and docs/guides/outage.md.

        Args:
            capacity: the most puts the spool holds (default 10,000).
            path: a file that keeps the puts across a restart of the process (``{pid}``
                stands for the process's id). Default None: in memory.
            dedup_ttl: seconds each put's dedup id is held on its shard (default 86,400).
            batch: puts sent to a shard per round trip of a flush (default 500).

        Raises:
            InvalidValueError: a setting outside its rule (see `aqless.Spool`).
            ConfigurationError: the file at `path` is in use by another process's spool,
                or damaged.
            ClientClosedError: the client was closed.

        Examples:
            ```python
            async with aqless.ShardedClient(nodes, deployment="billing") as client:
                spool = client.spool(capacity=10_000)
                receipt = await spool.put("invoices", "billing.Invoice", {"id": 7})
                print(receipt.jid, "queued" if receipt.queued else "spooled")
            ```
        """
        self._lifecycle.check_usable()
        made = ShardedSpool(self, capacity=capacity, path=path, dedup_ttl=dedup_ttl, batch=batch)
        self._spools.append(made)
        if self._lifecycle.state is ClientState.OPENED:
            made.start()
        return made

    def _primary_of(self, namespace: str) -> str:
        node = self.redis.get_node_from_key(f"{namespace}:ql:")
        if node is None:
            raise ConfigurationError(f"no primary serves the slot of {namespace!r}")
        return str(node.name)

    async def aclose(self) -> None:
        """Close every shard's client and the Cluster connections; the client then refuses
        every call and every open (ClientClosedError). Closing twice is harmless.

        Examples:
            ```python
            await client.aclose()
            ```
        """
        if self._lifecycle.state is not ClientState.CLOSED:
            with anyio.CancelScope(shield=True):
                for spool in self._spools:  # their last flush, while the shards still answer
                    await spool.aclose()
        if self._lifecycle.close():
            await self._release(self._clients)

    async def _release(self, clients: dict[int, Client]) -> None:
        for client in clients.values():
            await client.aclose()
        with anyio.move_on_after(5, shield=True):
            await self.redis.aclose()

    #: `aclose` under its earlier name.
    close = aclose

    async def __aenter__(self) -> Self:
        return await self.open()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    # -- the shards ---------------------------------------------------------------------------

    @property
    def shards(self) -> ShardMap:
        """The shard map, as read when the client opened (or last read it)."""
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
        """The client of one shard: a plain Client of its namespace.

        Examples:
            ```python
            first = client.shard(0)
            print(await first.queues.names())
            ```
        """
        self.shards.shard(shard_id)  # refused before open, KeyError for no such shard
        return self._clients[shard_id]

    @property
    def clients(self) -> list[Client]:
        """The clients of the shards (active and draining: jobs are taken from both),
        by shard id."""
        return [self._clients[shard.id] for shard in self.shards.shards]

    servers = clients  # the plain client of each shard

    @property
    def sharded(self) -> Literal[True]:
        """Whether the deployment is sharded: always for this client (mypy narrows a
        ``Client | ShardedClient`` by it)."""
        return True

    def shard_of(self, key: str) -> int:
        """The shard a put of this jid (or routing key) goes to: the owner of its bucket
        in the newest generation.

        Examples:
            ```python
            shard_id = client.shard_of("customer-42")
            ```
        """
        return self.shards.owner(key)

    def keeper_of(self, name: str) -> int:
        """The shard keeping a named throttle, rate limit or dedup id, where the jobs
        naming it first are put (`ShardMap.keeper`: the shard that had it before shards
        were added).

        Examples:
            ```python
            shard_id = client.keeper_of("smtp")
            ```
        """
        return self.shards.keeper(name)

    def shard_of_limit(self, name: str) -> int:
        """The shard holding the throttle or rate limit `name`: the shard whose namespace
        prefixes it (a queue's own), else the keeper of the name (aqless.limits).

        Examples:
            ```python
            shard_id = client.shard_of_limit(info.id)  # an id from rate_limits.all()
            ```
        """
        for shard in self.shards.shards:
            if name.startswith(self._clients[shard.id].prefix):
                return shard.id
        return self.keeper_of(name)

    def rotation(self) -> list[int]:
        """The shards' ids (active and draining), starting one further at every call.

        Examples:
            ```python
            for shard_id in client.rotation():
                print(await client.shard(shard_id).queues["invoices"].length())
            ```
        """
        ids = [shard.id for shard in self.shards.shards]
        start = self._turn % len(ids)
        self._turn += 1
        return ids[start:] + ids[:start]

    def new_jid(self, shard_id: int | None) -> str:
        """A random jid (a UUID4's hex) that a lookup finds on `shard_id` (any shard when
        None), drawn again until it does: its bucket's newest owner is `shard_id`, or, for
        a shard that owns no bucket now (a job joining its dependencies there), one of its
        owners over the generations is. N draws on average.

        Args:
            shard_id: the shard the jid must be found on, or None for any.

        Raises:
            ConfigurationError: `shard_id` owns no bucket in any generation.

        Examples:
            ```python
            jid = client.new_jid(1)
            assert client.shard_of(jid) == 1
            ```
        """
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

    async def shard_holding(self, jid: str) -> int | None:
        """The shard holding the job (or recurring job) `jid`, asking only the shards its
        bucket names; None if none has it.

        Examples:
            ```python
            shard_id = await client.shard_holding(jid)
            ```
        """
        found = await self.find_job(jid)
        return None if found is None else found[0]

    async def find_job(self, jid: str) -> tuple[int, Job | RecurringJob] | None:
        """The job (or recurring job) `jid` and its shard, asking only the shards its
        bucket names; when none has it, the map is read again and, if it changed, the
        shards it names now are asked (the job may be on a shard this map did not know).

        Examples:
            ```python
            found = await client.find_job(jid)
            if found is not None:
                shard_id, job = found
            ```
        """
        asked: set[int] = set()
        for _ in range(2):
            for shard_id in self.shards.candidates(jid):
                if shard_id in asked:
                    continue
                asked.add(shard_id)
                found = await self._clients[shard_id].jobs.get(jid)
                if found is not None:
                    return shard_id, found
            if not await self.reread_map():
                break
        return None

    async def shard_of_jid(self, jid: str) -> int:
        """The shard that holds `jid`, else the one a put of it goes to; no I/O while no
        shard was added (its bucket has one owner).

        Examples:
            ```python
            shard_id = await client.shard_of_jid(jid)
            ```
        """
        candidates = (await self.current_map()).candidates(jid)
        if len(candidates) > 1:
            found = await self.shard_holding(jid)
            if found is not None:
                return found
        return self.shards.candidates(jid)[0]

    async def client_of_jid(self, jid: str) -> Client:
        """The client of `shard_of_jid(jid)`.

        Examples:
            ```python
            shard_client = await client.client_of_jid(jid)
            ```
        """
        return self._clients[await self.shard_of_jid(jid)]

    #: the plain class whose verbs document the derived ones (`wait`, `result`)
    documented_by: ClassVar[type] = Client

    @property
    def _client(self) -> Self:  # the deployment its routed verbs route over: itself
        return self

    def _part(self, client: Client) -> Client:
        return client

    def events(self, *channels: str, workers: Sequence[str] = ()) -> MergedEventStream:
        """`Client.events` of every shard, merged into one stream that follows the map: a
        shard added is heard once this client reads the map that names it (at most
        `refresh` seconds later), a forgotten one is left (aqless.events.sharded).

        Examples:
            ```python
            async with client.events("completed") as events:
                async for event in events:
                    print(event.jid)
            ```
        """
        return MergedEventStream(self, *channels, workers=workers)

    async def shard_report(self) -> list[ShardReport]:
        """Each shard's queue counts, lag and primary's memory (aqless.sharding.reads).

        Examples:
            ```python
            for shard in await client.shard_report():
                print(shard.id, shard.node, shard.lag, shard.used_memory)
            ```
        """
        return await shard_reports(self)

    def __repr__(self) -> str:
        count = "?" if self._map is None else len(self._map.active)
        return f"<ShardedClient {self.deployment} {count} shards>"


#: A plain or a sharded deployment's client: what the CLI and the dashboard take.
AnyClient = Client | ShardedClient
