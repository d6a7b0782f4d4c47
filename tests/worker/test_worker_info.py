"""The record a running worker publishes about itself (host, pid, queues, concurrency,
version, started, last seen, completed), refreshed while it runs, expiring, and deleted
when it stops."""

from __future__ import annotations

import os
import socket
import time

import pytest

import aqless
from aqless import Job
from aqless._version import __version__
from aqless._worker import info as worker_info
from aqless.client import worker_index_key, worker_record_key
from tests.support.deployments import Deployment
from tests.support.worker import WORKER, all_complete, make_worker, one, running, until


async def test_a_running_worker_publishes_its_record_and_deletes_it_when_it_stops(
    client: aqless.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worker_info, "PUBLISH_EVERY", 0.05)
    monkeypatch.setattr(worker_info, "FIRST_AFTER", 0)
    jids = [await client.queues["q"].put("app.job") for _ in range(3)]
    before = time.time()
    worker = make_worker(client, ["q", "other-*"], one(lambda job: None), concurrency=3)
    async with running(worker):
        await all_complete(client, jids)

        async def counted() -> bool:
            found = (await client.workers.records()).get(WORKER)
            return found is not None and found.completed == 3

        await until(counted)
        record = (await client.workers.records())[WORKER]
        assert (record.host, record.pid) == (socket.gethostname(), os.getpid())
        assert record.queues == ("q", "other-*")
        assert (record.concurrency, record.version) == (3, __version__)
        assert before <= record.started <= record.seen <= time.time()
        assert record.failed == 0
        assert record.per_minute > 0
        key = worker_record_key(client.prefix, WORKER)
        assert 0 < await client.redis.ttl(key) <= worker_info.TTL
        assert 0 < await client.redis.ttl(worker_index_key(client.prefix)) <= worker_info.TTL
        first_seen = record.seen

        async def seen_again() -> bool:
            return (await client.workers.records())[WORKER].seen > first_seen

        await until(seen_again)
    assert await client.workers.records() == {}
    assert not await client.redis.exists(key)


async def test_seen_workers_leaves_out_clients_that_hold_nothing_and_publish_nothing(
    client: aqless.Client,
    other: aqless.Client,
    deployment: Deployment,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(worker_info, "PUBLISH_EVERY", 0.05)
    monkeypatch.setattr(worker_info, "FIRST_AFTER", 0)
    await other.queues["q"].pop_many(1)  # pops nothing: qless lists it all the same
    await client.queues["held"].put("app.held")
    held = await other.queues["held"].pop_many(1)
    assert len(held) == 1
    await other.queues["q"].pop_many(1)
    async with deployment.open_client(worker_name="popper") as lone:
        await lone.queues["q"].pop_many(1)
    gate: list[Job] = []
    worker = make_worker(client, ["q"], one(gate.append))
    async with running(worker):

        async def published() -> bool:
            return WORKER in await client.workers.records()

        await until(published)
        workers, others = await client.workers.seen()
    by_name = {seen.counts.name: seen for seen in workers}
    assert sorted(by_name) == ["other-worker", WORKER]
    assert by_name["other-worker"].info is None  # another client's worker: what qless knows
    assert by_name["other-worker"].counts.jobs == 1
    assert by_name[WORKER].info is not None
    assert others == ["popper"]
