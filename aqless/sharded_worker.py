"""A worker over every shard of a sharded deployment (aqless.sharded).

`ShardedWorker` runs one `Worker` per shard in one task group, each on its shard's client,
with a share of the slots: ``concurrency`` split evenly over the shards. So every shard is
served all the time (none starves while another has work), and each shard's worker keeps
all of its own machinery: its pops, heartbeats and outcomes go to its shard, and it is
woken by that shard's put events and pushed that shard's jobs. A shard without work
leaves its share of the slots idle: routing by bucket spreads jobs evenly, but a
routing key used by most jobs does not (a slot budget shared between the shards is for a
later version).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import Any

import anyio

from aqless._worker import defaults
from aqless.errors import ConfigurationError
from aqless.sharded import ShardedClient
from aqless.worker import Worker, WorkerCounters

__all__ = ["ShardedWorker"]


class ShardedWorker:
    """Runs jobs from some queues on every shard, `concurrency` at a time in all.

    Args:
        client: an open ShardedClient.
        queues: as `Worker`'s.
        concurrency: the slots, shared out evenly among the shards (at least one each).
        options: any other `Worker` option but ``max_jobs``, for every shard's worker.
    """

    def __init__(
        self,
        client: ShardedClient,
        queues: Sequence[str],
        *,
        concurrency: int = defaults.CONCURRENCY,
        **options: Any,
    ) -> None:
        if "max_jobs" in options:
            raise ConfigurationError("a ShardedWorker takes no max_jobs (not supported yet)")
        shards = client.clients
        if concurrency < len(shards):
            raise ConfigurationError(
                f"concurrency {concurrency} is less than one slot for each of the "
                f"{len(shards)} shards"
            )
        self.client = client
        share, extra = divmod(concurrency, len(shards))
        #: one worker per shard, in shard order
        self.workers = [
            Worker(shard, queues, concurrency=share + (index < extra), **options)
            for index, shard in enumerate(shards)
        ]
        self.concurrency = concurrency

    def __repr__(self) -> str:
        return f"<ShardedWorker {len(self.workers)} shards {self.concurrency} slots>"

    async def run(self) -> WorkerCounters:
        """Run every shard's worker until all have stopped; returns their counters summed."""
        async with anyio.create_task_group() as shards:
            for worker in self.workers:
                shards.start_soon(worker.run)
        return self.counters

    @property
    def counters(self) -> WorkerCounters:
        """What the shards' workers did, summed."""
        total = WorkerCounters()
        for worker in self.workers:
            for field in fields(WorkerCounters):
                name = field.name
                setattr(total, name, getattr(total, name) + getattr(worker.counters, name))
        return total

    @property
    def running(self) -> list[str]:
        """The jids running now, on every shard."""
        return [jid for worker in self.workers for jid in worker.running]

    def stop(self) -> None:
        """`Worker.stop` on every shard."""
        for worker in self.workers:
            worker.stop()

    def finish(self) -> None:
        """`Worker.finish` on every shard."""
        for worker in self.workers:
            worker.finish()

    def pause(self) -> None:
        """`Worker.pause` on every shard."""
        for worker in self.workers:
            worker.pause()

    def resume_popping(self) -> None:
        """`Worker.resume_popping` on every shard."""
        for worker in self.workers:
            worker.resume_popping()
