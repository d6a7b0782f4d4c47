"""The shards' workers of a ShardedWorker, following the shard map: a worker started for
each new shard, the worker of a forgotten shard stopped, their counters summed. The base of
`aqless.ShardedWorker`, whose ``__init__`` makes the state declared here and whose
``_worker`` makes a shard's worker."""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from dataclasses import fields
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

import anyio
from anyio.abc import TaskGroup

from aqless._worker.counters import WorkerCounters
from aqless.errors import AqlessError

if TYPE_CHECKING:
    from aqless.sharding.client import ShardedClient

# the worker's own logger, as before these parts had a module of their own
logger = logging.getLogger("aqless.worker")


class ShardWorker(Protocol):
    """A shard's worker, as the shards' workers are run and summed."""

    @property
    def counters(self) -> WorkerCounters: ...
    @property
    def running(self) -> Collection[str]: ...
    async def run(self) -> WorkerCounters: ...
    def stop(self) -> None: ...
    def pause(self) -> None: ...


W = TypeVar("W", bound=ShardWorker)


class ShardFollower(Generic[W]):
    """Runs the shards' workers and matches them to the shard map."""

    client: ShardedClient
    by_shard: dict[int, W]
    limit_reached: str | None
    _stopping: bool
    _paused: bool
    _live: int
    _retired: set[int]

    if TYPE_CHECKING:

        def _worker(self, shard_id: int) -> W: ...
        def finish(self) -> None: ...

    def _spent(self) -> None:
        """Every job of `max_jobs` is taken: finish."""
        self.limit_reached = "max_jobs"
        self.finish()

    def _start(self, group: TaskGroup, worker: W) -> None:
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
            self._follow(group)

    def _each(self, verb: Callable[[W], None]) -> None:
        for worker in self.by_shard.values():
            verb(worker)

    def _follow(self, group: TaskGroup) -> None:
        """Start a worker for each new shard in `group`, stop the worker of each forgotten
        one (`aqless.ShardedWorker.follow`)."""
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

    def _summed(self) -> WorkerCounters:
        """What the shards' workers did, summed."""
        total = WorkerCounters()
        for worker in self.by_shard.values():
            for field in fields(WorkerCounters):
                name = field.name
                setattr(total, name, getattr(total, name) + getattr(worker.counters, name))
        return total
