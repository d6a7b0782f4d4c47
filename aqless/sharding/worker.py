"""A worker over every shard of a sharded deployment (aqless.sharding.client).

`ShardedWorker` runs one `Worker` per shard in one task group, each on its shard's client,
all sharing one budget of `concurrency` slots (aqless._worker.budget): a shard with all
the work may use every slot, and a slot freed on one shard wakes a shard waiting for one.
Each shard's worker keeps all of its own machinery: its pops, heartbeats and outcomes go
to its shard, and it is pushed jobs by, or woken by the put events of, that shard. An idle
one offers its server a share of the budget's free slots (the budget counts them as taken
until they are given back, see aqless._worker.budget), so a job put into an idle queue on
any shard arrives in one hop; a shard short of a slot makes the others give their offered
slots back. With `max_jobs` (or ``burst``) none takes pushed jobs. A pop takes at most a
quarter of the slots, so no shard takes them all at once while another has work.

The shard map may change while it runs (shards added, drained, forgotten): every
``client.refresh`` seconds it reads the map again, starts a Worker for each new shard (in
the same budget) and stops the Worker of a forgotten shard. A draining shard's Worker
keeps taking its jobs.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import fields
from typing import Final, Unpack, cast

import anyio
from anyio.abc import TaskGroup

from aqless._concurrency.task_groups import own_errors
from aqless._worker.budget import SlotBudget
from aqless.errors import AqlessError, ConfigurationError
from aqless.sharding.client import ShardedClient
from aqless.worker import (
    Worker,
    WorkerCounters,
    WorkerOptions,
    WorkerParts,
    WorkerSettings,
)

__all__ = ["ShardedWorker"]

logger = logging.getLogger("aqless.worker")

#: the keywords that are a worker's parts, not its settings
_PARTS: Final = WorkerParts.__optional_keys__


class ShardedWorker:
    """Runs jobs from some queues on every shard, `concurrency` at a time in all.

    Args:
        client: an open ShardedClient.
        queues: as `Worker`'s.
        settings: as `Worker`'s (`aqless.WorkerSettings`), for every shard's worker, but:
            ``concurrency`` is one budget of slots for every shard's worker (at least one
            per shard), and ``max_jobs`` counts the jobs taken over every shard, then it
            finishes and returns.
        options: `Worker`'s keywords (settings, overriding those in `settings`, and its
            handlers, retry, requeue, backoff, middleware and observers), for every shard's
            worker.
    """

    def __init__(
        self,
        client: ShardedClient,
        queues: Sequence[str],
        settings: WorkerSettings | None = None,
        **options: Unpack[WorkerOptions],
    ) -> None:
        parts = {name: value for name, value in options.items() if name in _PARTS}
        keywords = {name: value for name, value in options.items() if name not in _PARTS}
        settings = (WorkerSettings() if settings is None else settings).replace(**keywords)
        concurrency, max_jobs = settings.concurrency, settings.max_jobs
        shards = client.clients
        if concurrency < len(shards):
            raise ConfigurationError(
                f"concurrency {concurrency} is less than one slot for each of the "
                f"{len(shards)} shards"
            )
        self.client = client
        self.settings = settings
        self.concurrency = concurrency
        self._queues = list(queues)
        self._parts = cast(WorkerParts, parts)
        self._shard_settings = settings.replace(max_jobs=None)  # the budget counts them
        self.max_jobs = max_jobs
        #: the limit that made the worker finish, if one did
        self.limit_reached: str | None = None
        self.budget = SlotBudget(concurrency, jobs=max_jobs, on_spent=self._spent)
        #: one worker per shard, by shard id
        self.by_shard = {shard.id: self._worker(shard.id) for shard in client.shards.shards}
        self._stopping = False
        self._paused = False
        self._live = 0
        self._retired: set[int] = set()  # forgotten shards whose workers were stopped

    def _spent(self) -> None:
        """Every job of `max_jobs` is taken: finish."""
        self.limit_reached = "max_jobs"
        self.finish()

    def _worker(self, shard_id: int) -> Worker:
        shard = self.client.shard(shard_id)
        return Worker(shard, self._queues, self._shard_settings, budget=self.budget, **self._parts)

    @property
    def workers(self) -> list[Worker]:
        """The shards' workers, in shard order (a forgotten shard's stays listed)."""
        return list(self.by_shard.values())

    def __repr__(self) -> str:
        return f"<ShardedWorker {len(self.by_shard)} shards {self.concurrency} slots>"

    async def run(self) -> WorkerCounters:
        """Run every shard's worker, following the shard map, until all have stopped;
        returns their counters summed. A shard's worker that fails stops the others and
        raises its own error (e.g. PermissionDeniedError when the shard's ACL refuses
        its channels), not anyio's ExceptionGroup."""
        with own_errors():
            async with anyio.create_task_group() as group:
                for worker in self.by_shard.values():
                    self._start(group, worker)
                group.start_soon(self._follow_map, group)
        return self.counters

    def _start(self, group: TaskGroup, worker: Worker) -> None:
        self._live += 1

        async def run_one() -> None:
            try:
                await worker.run()
            finally:
                self._live -= 1
                if self._live == 0:  # every shard's worker is done: so is the map's reader
                    group.cancel_scope.cancel()

        group.start_soon(run_one)

    async def _follow_map(self, group: TaskGroup) -> None:
        """Every ``client.refresh`` seconds: read the map, start a worker for each new
        shard, stop the worker of each forgotten one."""
        while not self._stopping:
            await anyio.sleep(self.client.refresh)
            try:
                await self.client.reread_map()
            except AqlessError as error:
                logger.warning("cannot read the shard map again (%s)", error)
                continue
            self.follow(group)

    def follow(self, group: TaskGroup) -> None:
        """Match the workers to the shard map the client holds now."""
        if self._stopping:
            return
        shards = self.client.shards.shards
        known = {shard.id for shard in shards}
        for shard_id, worker in self.by_shard.items():
            if shard_id not in known and shard_id not in self._retired:
                self._retired.add(shard_id)
                worker.stop()
        for shard in shards:
            if shard.id not in self.by_shard:
                worker = self._worker(shard.id)
                if self._paused:
                    worker.pause()
                self.by_shard[shard.id] = worker
                self._start(group, worker)

    @property
    def counters(self) -> WorkerCounters:
        """What the shards' workers did, summed."""
        total = WorkerCounters()
        for worker in self.by_shard.values():
            for field in fields(WorkerCounters):
                name = field.name
                setattr(total, name, getattr(total, name) + getattr(worker.counters, name))
        return total

    @property
    def running(self) -> list[str]:
        """The jids running now, on every shard."""
        return [jid for worker in self.by_shard.values() for jid in worker.running]

    def stop(self) -> None:
        """`Worker.stop` on every shard."""
        self._stopping = True
        for worker in self.by_shard.values():
            worker.stop()

    def finish(self) -> None:
        """`Worker.finish` on every shard."""
        self._stopping = True
        for worker in self.by_shard.values():
            worker.finish()

    def pause(self) -> None:
        """`Worker.pause` on every shard (and a shard's added meanwhile)."""
        self._paused = True
        for worker in self.by_shard.values():
            worker.pause()

    def resume_popping(self) -> None:
        """`Worker.resume_popping` on every shard."""
        self._paused = False
        for worker in self.by_shard.values():
            worker.resume_popping()
