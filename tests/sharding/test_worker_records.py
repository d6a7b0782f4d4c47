"""The records a sharded worker publishes on each shard, read through the public reader
``client.workers.records()`` (and ``seen()``) as one record per worker."""

from __future__ import annotations

import pytest

import aqless
from aqless._worker.info import InfoPublisher
from tests.faults.cluster import Cluster
from tests.support.sharding import deployment

pytestmark = pytest.mark.timeout(60)
pytest_plugins = ["tests.support.sharding_fixtures"]


async def test_a_workers_records_on_every_shard_read_as_one(cluster: Cluster) -> None:
    async with deployment(cluster, "vrecords") as client:
        first, second, _ = client.servers
        ann_there = InfoPublisher(first, "ann", ["q"], 4, aqless.WorkerCounters(completed=5))
        ann_here = InfoPublisher(second, "ann", ["q"], 4, aqless.WorkerCounters(completed=7))
        await ann_there.publish()
        await ann_here.publish()
        records = await client.workers.records()
        assert set(records) == {"ann"}
        assert records["ann"].completed == 12
        assert records["ann"].started == min(ann_there.started, ann_here.started)
        assert (await first.workers.records())["ann"].completed == 5

        seen = await client.workers.seen()
        assert [worker.counts.name for worker in seen.workers] == ["ann"]
        assert seen.workers[0].info == records["ann"]
        assert seen.others == []

        await ann_here.withdraw()
        assert (await client.workers.records())["ann"].completed == 5
