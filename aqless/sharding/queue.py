"""A queue of a sharded deployment: where a put goes (its jid's bucket, or the one shard its
dependencies, routing key, throttle, rate limit, dedup id or pinned queue name; CrossShardError
when they name two), pops that take from every shard in turn, and its other verbs routed and
merged (aqless._concurrency.routing); `ShardedQueues`, every queue's."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias, Unpack

import anyio

from aqless import rules
from aqless._concurrency.routing import gathered, merged, page, paged, routed
from aqless._concurrency.task_groups import own_errors
from aqless.client import Client, Queues
from aqless.contracts import RateLimit
from aqless.contracts.derived import ShardedQueueRouted, ShardedQueuesRouted
from aqless.errors import AqlessError, PartialPopError
from aqless.job import Job
from aqless.models import GroupCounts, QueueCounts
from aqless.puts import (
    Durable,
    JobClass,
    PutOptions,
    PutRequest,
    PutResult,
    PutSender,
    dedup_of,
    default_options,
    inside_hooks,
)
from aqless.queue import RECUR, Queue, checked_name, recurring_jid
from aqless.scaling.estimate import QueueScaling, every_queue_scaling, read_scaling
from aqless.sharding.placement import Placement, PutTargets, group_key, place

if TYPE_CHECKING:
    from aqless.sharding.deployment import Deployment as ShardedClient

__all__ = ["ShardedPutHook", "ShardedQueue", "ShardedQueues"]

#: ``ShardedClient.put_hooks``' entries: as `aqless.puts.PutHook`, given the `ShardedQueue`
#: (a hook typed for both, ``queue: Queue | ShardedQueue``, serves either kind of client).
ShardedPutHook: TypeAlias = Callable[
    ["ShardedQueue", list[PutRequest], PutSender], Awaitable[list[str]]
]


class ShardedQueue(ShardedQueueRouted):
    """A queue of a sharded deployment: its partitions, one per shard (no I/O to make). Its
    verbs declared with a route on `aqless.contracts.Queue` are derived (its base); the
    others are written here.

    Examples:
        ```python
        invoices = client.queues["invoices"]
        jid = await invoices.put("billing.Invoice", {"id": 7}, route="customer-42")
        ```
    """

    #: the plain class whose verbs document the derived ones
    documented_by: ClassVar[type] = Queue

    def __init__(self, client: ShardedClient, name: str) -> None:
        self._client = client
        self.name = checked_name(name)

    def __repr__(self) -> str:
        return f"<ShardedQueue {self.name}>"

    def partition(self, shard_id: int) -> Queue:
        """The queue on one shard.

        Examples:
            ```python
            on_first = await client.queues["invoices"].partition(0).length()
            ```
        """
        return self._client.shard(shard_id).queues[self.name]

    @property
    def partitions(self) -> list[Queue]:
        return [client.queues[self.name] for client in self._client.clients]

    # -- putting ------------------------------------------------------------------------------

    async def _place(
        self, klass: JobClass, data: Any, options: PutOptions, route: str | None
    ) -> Placement:
        """Which shard a put goes to, and its jid (aqless.sharding.placement), once what
        needs the servers is looked up: the dependencies' shards, and the shard holding a
        given jid's job when its bucket names several."""
        defaults = {} if isinstance(klass, str) else default_options(klass, data)

        def chosen(option: str) -> Any:  # the option given, else the class's
            value = options.get(option)
            return value if value is not None else defaults.get(option)

        shard_map = await self._client.current_map()
        dedup = dedup_of(options.get("dedup"))
        targets = PutTargets(
            queue=self.name,
            jid=chosen("jid"),
            route=route,
            dependencies={
                jid: await self._client.shard_of_jid(jid) for jid in chosen("depends") or ()
            },
            throttles=chosen("throttles") or (),
            rate_limits=chosen("rate_limits") or (),
            dedup_id=None if dedup is None else dedup.id,
            group=chosen("group"),
        )
        holder = None
        if targets.jid and len(shard_map.candidates(targets.jid)) > 1:
            holder = await self._client.shard_holding(targets.jid)
        return place(shard_map, targets, holder=holder, new_jid=self._client.new_jid)

    async def put(
        self,
        klass: JobClass,
        data: Any = None,
        *,
        route: str | None = None,
        requeue: bool = False,
        durable: Durable = False,
        **options: Unpack[PutOptions],
    ) -> str:
        """`Queue.put` on the shard the job belongs to (see the module's documentation);
        returns its jid. Jobs put with the same `route` (a routing key such as a customer
        id) go to one shard, so they keep their order. The client's `put_hooks` wrap it
        once, before it is placed.

        Raises:
            CrossShardError: the dependencies, jid, route, throttles, rate limits or
                dedup id name different shards (nothing is put).

        Examples:
            ```python
            invoices = client.queues["invoices"]
            jid = await invoices.put("billing.Invoice", {"id": 7}, route="customer-42")
            await invoices.put("billing.Mail", {"id": 7}, depends=[jid])  # on jid's shard
            ```
        """

        request = PutRequest(klass, data, **options)
        return (await self._put_one(request, route, requeue, durable)).jid

    async def put_result(
        self,
        klass: JobClass,
        data: Any = None,
        *,
        route: str | None = None,
        durable: Durable = False,
        **options: Unpack[PutOptions],
    ) -> PutResult:
        """`put` (with the same options, `requeue` aside), telling what it did: the jid, and
        whether the put was deduplicated (no new job made) or debounced.

        Examples:
            ```python
            result = await client.queues["invoices"].put_result("billing.Sync", {}, dedup="sync-42")
            ```
        """
        return await self._put_one(PutRequest(klass, data, **options), route, False, durable)

    async def _put_one(
        self, request: PutRequest, route: str | None, requeue: bool, durable: Durable
    ) -> PutResult:
        """One put, inside the client's put hooks."""
        results: list[PutResult] = []

        async def send(requests: list[PutRequest]) -> list[str]:
            (one,) = requests
            shard, placed = await self._placed(one, route)
            partition = self.partition(shard)
            # its fast path: a new job (or a replaced one), or the one moved
            if requeue or (placed.dedup is None and placed.replace is not False):
                jid = await partition.put(
                    placed.klass, placed.data, requeue=requeue, durable=durable, **placed.options()
                )
                results.append(PutResult(jid))
            else:
                results.append(
                    await partition.put_result(
                        placed.klass, placed.data, durable=durable, **placed.options()
                    )
                )
            return [results[-1].jid]

        (jid,) = await inside_hooks(self._client.put_hooks, self, send)([request])
        return results[0] if results else PutResult(jid)  # a hook may answer without sending

    async def _placed(self, request: PutRequest, route: str | None) -> tuple[int, PutRequest]:
        """The shard a put request goes to, and the request with its jid."""
        place = await self._place(request.klass, request.data, request.options(), route)
        return place.shard, replace(request, jid=place.jid)

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
        share has been sent, as `Queue.put_many` does. The client's `put_hooks` wrap it
        once, given every request, before they are placed.

        Examples:
            ```python
            requests = [aqless.PutRequest("billing.Invoice", {"id": i}) for i in range(100)]
            jids = await client.queues["invoices"].put_many(requests)
            ```
        """

        results = await self.put_many_results(requests, route=route, batch=batch, durable=durable)
        return [result.jid for result in results]

    async def put_many_results(
        self,
        requests: Iterable[PutRequest],
        *,
        route: str | None = None,
        batch: int = 1000,
        durable: Durable = False,
    ) -> list[PutResult]:
        """`put_many`, telling what each put did (as `put_result`).

        Examples:
            ```python
            requests = [aqless.PutRequest("billing.Invoice", {"id": 1})]
            results = await client.queues["invoices"].put_many_results(requests)
            ```
        """
        results: list[PutResult] = []

        async def send(requests: list[PutRequest]) -> list[str]:
            results[:] = await self._put_placed(requests, route, batch, durable)
            return [result.jid for result in results]

        jids = await inside_hooks(self._client.put_hooks, self, send)(list(requests))
        if len(results) != len(jids):  # a hook answered without sending
            return [PutResult(jid) for jid in jids]
        return results

    async def _put_placed(
        self, requests: list[PutRequest], route: str | None, batch: int, durable: Durable
    ) -> list[PutResult]:
        placed = [await self._placed(request, route) for request in requests]
        by_shard: dict[int, list[int]] = {}
        for index, (shard, _) in enumerate(placed):
            by_shard.setdefault(shard, []).append(index)
        results: list[PutResult | None] = [None] * len(placed)
        refusals: list[AqlessError] = []

        async def put_share(shard: int, indexes: list[int]) -> None:
            share = [placed[index][1] for index in indexes]
            partition = self.partition(shard)
            try:
                put = await partition.put_many_results(share, batch=batch, durable=durable)
            except AqlessError as refusal:
                refusals.append(refusal)
                return
            for index, result in zip(indexes, put, strict=True):
                results[index] = result

        with own_errors():  # anything else a share raises reaches the caller as itself
            async with anyio.create_task_group() as shares:
                for shard, indexes in by_shard.items():
                    shares.start_soon(put_share, shard, indexes)
        if refusals:
            raise refusals[0]
        return [result for result in results if result is not None]

    async def recur(
        self,
        klass: JobClass,
        data: Any = None,
        interval: float | None = None,
        *,
        name: str | None = None,
        jid: str | None = None,
        throttles: Sequence[str] | None = None,
        **options: Any,
    ) -> str:
        """`Queue.recur` on the shard of the recurring job's jid (its spawned jobs are put
        there; a named template's jid is its name); a template naming throttles goes to
        their keeper shard. Its inputs are checked before the shard is chosen.

        Examples:
            ```python
            rid = await client.queues["invoices"].recur("billing.Report", {}, interval=3600)
            ```
        """
        rules.check_recurring(RECUR, {"name": name, "throttles": throttles, **options})
        named = recurring_jid(name, jid)
        placing = PutOptions(jid=named or jid, throttles=throttles)
        place = await self._place(klass, data, placing, None)
        return await self.partition(place.shard).recur(
            klass,
            data,
            interval,
            name=name,
            jid=None if named else place.jid,
            throttles=throttles,
            **options,
        )

    # -- taking -------------------------------------------------------------------------------

    async def pop_many(self, count: int, *, worker: str | None = None) -> list[Job]:
        """Up to `count` jobs from every shard: the count is shared out among the shards
        (the first shard moving on at every call), asked at once, and what a shard did
        not have is asked of the shards that filled their share, in turn.

        A job popped is never dropped: if a shard refuses (a server condition, a lost
        connection) while others popped jobs, those jobs are locked to `worker` and are
        handed over in a PartialPopError (its `jobs`, with the shard's own error as
        `error`), not left to wait for their locks to expire. When no job was popped,
        the shard's own error is raised.

        Raises:
            PartialPopError: a shard refused after other shards popped jobs.
            InvalidValueError: `count` is not a whole number from 1 (nothing sent).

        Examples:
            ```python
            try:
                jobs = await client.queues["invoices"].pop_many(10)
            except aqless.PartialPopError as partial:
                jobs = partial.jobs  # held: run them, then handle partial.error
            ```
        """
        count = rules.check("pop.count", count, "queue.pop")
        order = self._client.rotation()
        shares = [count // len(order) + (i < count % len(order)) for i in range(len(order))]
        refusals: list[tuple[int, AqlessError]] = []

        async def pop_from(shard: int, wanted: int) -> list[Job]:
            try:
                return await self.partition(shard).pop_many(wanted, worker=worker)
            except AqlessError as refusal:
                refusals.append((shard, refusal))
                return []

        asked = [(shard, share) for shard, share in zip(order, shares, strict=True) if share]
        replies = await gathered(asked, lambda pair: pop_from(*pair))
        popped = {shard: jobs for (shard, _), jobs in zip(asked, replies, strict=True)}
        jobs = [job for shard in order for job in popped.get(shard, [])]
        for shard, share in zip(order, shares, strict=True):
            if len(jobs) >= count or refusals:
                break
            if len(popped.get(shard, [])) >= share:  # it may have more
                jobs += await pop_from(shard, count - len(jobs))
        if refusals:
            shard, refusal = refusals[0]
            if not jobs:
                raise refusal
            raise PartialPopError(jobs, shard, refusal) from refusal
        return jobs

    async def pop(self, *, worker: str | None = None) -> Job | None:
        """The next job from the shards, starting one shard further at every call.

        Examples:
            ```python
            job = await client.queues["invoices"].pop()
            ```
        """
        jobs = await self.pop_many(1, worker=worker)
        return jobs[0] if jobs else None

    # -- looking ------------------------------------------------------------------------------

    def _part(self, client: Client) -> Queue:
        return client.queues[self.name]

    async def scaling(
        self, target_p95: float, *, previous: QueueScaling | None = None
    ) -> QueueScaling:
        """`Queue.scaling` over the shards: counts, statistics and the next job merged, one
        model for the slots of every shard together.

        Examples:
            ```python
            signals = await client.queues["invoices"].scaling(target_p95=30)
            ```
        """
        return await read_scaling(self, self._client.clock(), target_p95, previous)

    async def unfail(self, group: str, count: int = 25) -> int:
        """Move up to `count` failed jobs of `group` into this queue, shard after shard (the
        oldest of each shard first); returns how many moved.

        Examples:
            ```python
            moved = await client.queues["invoices"].unfail("smtp-down", 100)
            ```
        """
        moved = 0
        for queue in self.partitions:
            if moved >= count:
                break
            moved += await queue.unfail(group, count - moved)
        return moved

    #: it hands back the plain queue's jobs (`aqless.Job`), so it is routed here
    peek = routed(Queue.peek, paged("queue.peek"), page)

    # -- its own throttle and rate limit: on the shard it is pinned to ------------------------

    def _home(self) -> int:
        """The shard where the queue's own throttle and rate limit live: its pinned shard,
        else the keeper of its name (where pinning it would put it)."""
        shards = self._client.shards
        pin = shards.pin_of(self.name)
        return shards.keeper(self.name) if pin is None else pin

    async def set_throttle(self, maximum: int) -> None:
        """Pin the queue to one shard (`ShardedClient.pin`), then let at most `maximum` of
        its jobs run at once (0: unlimited): every job put from now on goes there, so the
        maximum holds over the deployment.

        Raises:
            InvalidValueError: `maximum` is not a whole number from 0; nothing pinned.

        Examples:
            ```python
            await client.queues["invoices"].set_throttle(5)
            ```
        """
        rules.check("maximum", maximum, "queue.throttle.set")  # refused before the pin
        await self._client.pin(self.name)
        await self.partition(self._home()).set_throttle(maximum)

    async def set_rate_limit(
        self, limit: int | None, *, per: float = 1.0, smooth: bool = False
    ) -> None:
        """Pin the queue to one shard (`ShardedClient.pin`), then start at most `limit` of
        its jobs in any `per` seconds, in bursts or, `smooth`, spread evenly (None lifts the
        limit).

        Raises:
            InvalidValueError: `limit` or `per` outside its rule; nothing pinned.

        Examples:
            ```python
            await client.queues["invoices"].set_rate_limit(100, per=60)
            ```
        """
        if limit is not None:  # refused before the pin
            rules.check("limit", limit, "rateLimit.set")
            rules.check("per", per, "rateLimit.set")
        await self._client.pin(self.name)
        await self.partition(self._home()).set_rate_limit(limit, per=per, smooth=smooth)

    @property
    def rate_limit(self) -> RateLimit:
        """The queue's own rate limit, on its pinned shard (no I/O)."""
        return self.partition(self._home()).rate_limit

    # -- fairness groups: each on the shard its key names (the default group on every one) ----

    async def groups(self) -> list[GroupCounts]:
        """`Queue.groups` over the shards: a group's counts summed over the shards that
        hold its jobs. The default group is on every shard: where the queue has no group,
        all its jobs are the default group's.

        Examples:
            ```python
            for group in await client.queues["invoices"].groups():
                print(group.name, group.waiting, group.running)
            ```
        """
        parts = await gathered(self.partitions, _groups_or_counts)
        if not any(isinstance(part, list) for part in parts):
            return []
        records = [part if isinstance(part, list) else [_ungrouped(part)] for part in parts]
        return sorted(merged(records), key=lambda record: record.name or "")

    def _keeper_of_group(self, group: str) -> int:
        """The shard a fairness group of this queue lives on (its jobs' turns are taken
        there; `aqless._concurrency.routing.of_group`)."""
        return self._client.shards.keeper(group_key(self.name, group))


async def _groups_or_counts(queue: Queue) -> list[GroupCounts] | QueueCounts:
    """A partition's groups, or its counts where it has none."""
    return await queue.groups() or await queue.counts()


def _ungrouped(counts: QueueCounts) -> GroupCounts:
    """The default group of a partition without groups: all of its jobs."""
    running = counts.running + counts.stalled
    return GroupCounts(name=None, waiting=counts.waiting, running=running, weight=1, concurrency=0)


class ShardedQueues(ShardedQueuesRouted):
    """``client.queues[name]`` (no I/O), and the queues over every shard.

    Examples:
        ```python
        invoices = client.queues["invoices"]
        names = await client.queues.names()  # over every shard
        ```
    """

    #: the plain class whose verbs document the derived ones
    documented_by: ClassVar[type] = Queues

    def __init__(self, client: ShardedClient) -> None:
        self._client = client

    def __getitem__(self, name: str) -> ShardedQueue:
        return ShardedQueue(self._client, name)

    def _part(self, client: Client) -> Queues:
        return client.queues

    async def scaling(
        self, target_p95: float, *, previous: Sequence[QueueScaling] = ()
    ) -> list[QueueScaling]:
        """Every queue's `ShardedQueue.scaling`, each over the time since its reading in
        `previous` (the last call's answer), if any.

        Examples:
            ```python
            signals = await client.queues.scaling(target_p95=30)
            ```
        """
        return await every_queue_scaling(self, target_p95, previous)
