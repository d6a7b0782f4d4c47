"""Batches of a sharded deployment, on a real three-primary Valkey Cluster: a batch and its
members live on the shard its id places it on (or the one its members name), its callbacks
run from a ShardedWorker, and members that name two shards are refused before anything is
written."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

import aqless
from aqless import BatchCallback, CrossShardError, PutRequest
from tests.faults.cluster import Cluster
from tests.support.sharding import deployment, keys_of_a_shard

pytestmark = pytest.mark.timeout(60)
pytest_plugins = ["tests.support.sharding_fixtures"]


async def test_a_batch_lives_on_the_shard_of_its_id_and_fires_its_callback(
    cluster: Cluster,
) -> None:
    async with deployment(cluster, "batches") as client:
        members = [("work", PutRequest("app.Member")) for _ in range(6)]
        bid = await client.batches.put(
            members, on_complete=BatchCallback("app.Done", "callbacks"), description="six"
        )
        shard = client.shard_of(bid)
        assert await client.shard(shard).queues["work"].length() == 6
        batch = await client.batches.get(bid)
        assert batch is not None
        assert (batch.total, batch.pending) == (6, 6)

        done: list[dict[str, Any]] = []
        handlers = aqless.Handlers()
        handlers.register("app.Member")(lambda job: None)
        handlers.register("app.Done")(lambda job: done.append(dict(job.data)))
        worker = aqless.ShardedWorker(
            client, ["work", "callbacks"], handlers=handlers, concurrency=3, burst=True
        )
        with anyio.fail_after(30):
            await worker.run()
        assert [data["batch"]["done"] for data in done] == [6]
        assert (await client.batches.recent()).total == 1


async def test_members_naming_two_shards_are_refused(cluster: Cluster) -> None:
    async with deployment(cluster, "batches-refused") as client:
        first, second = keys_of_a_shard(client, 0)[0], keys_of_a_shard(client, 1)[0]
        members = [
            ("work", PutRequest("app.Member", jid=first)),
            ("work", PutRequest("app.Member", jid=second)),
        ]
        with pytest.raises(CrossShardError, match="a batch lives on one shard"):
            await client.batches.put(members)
        with pytest.raises(CrossShardError):
            await client.batches.put([("work", PutRequest("app.Member", jid=first))], bid=second)
        assert (await client.batches.recent()).total == 0
        assert await client.queues["work"].length() == 0
