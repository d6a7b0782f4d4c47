"""`ShardedWorker` takes `aqless.WorkerSettings` whole, as `Worker` does, and hands each
shard's worker the same settings (but ``max_jobs``, which its budget counts over every
shard)."""

from __future__ import annotations

import anyio
import pytest

import aqless
from tests.faults.cluster import Cluster
from tests.support.sharding import deployment

pytest_plugins = ["tests.support.sharding_fixtures"]


async def test_a_sharded_worker_takes_the_settings_whole(cluster: Cluster) -> None:
    handlers = aqless.Handlers()
    done: list[str] = []

    @handlers.register("app.Work")
    async def work(job: aqless.Job) -> None:
        done.append(job.jid)

    settings = aqless.WorkerSettings(concurrency=6, interval=0.5, max_jobs=12, prefetch=0)
    async with deployment(cluster, "worker-settings") as client:
        await client.queues["work"].put_many(
            [aqless.PutRequest("app.Work", {"n": n}) for n in range(30)]
        )
        worker = aqless.ShardedWorker(client, ["work"], settings, handlers=handlers, grace=1.0)
        assert worker.settings == settings.replace(grace=1.0)
        assert (worker.concurrency, worker.max_jobs, worker.budget.total) == (6, 12, 6)
        for shard_worker in worker.workers:
            assert shard_worker.settings == settings.replace(grace=1.0, max_jobs=None)
            assert shard_worker.handlers is handlers
        with anyio.fail_after(30):
            counters = await worker.run()
        assert counters.started == 12
        assert worker.limit_reached == "max_jobs"
        with pytest.raises(aqless.InvalidValueError, match="burst must be true or false"):
            aqless.ShardedWorker(client, ["work"], settings, burst="yes")  # type: ignore[arg-type]
