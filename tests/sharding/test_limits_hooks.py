"""A sharded deployment's rate limits (each on the shard that enforces it), queue patterns
(on every shard) and put hooks (once per put, before the job is placed), on a real
three-primary Valkey Cluster."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

import aqless
from aqless import tracing
from aqless.flows import FlowNode
from aqless.puts import PutRequest, PutSender
from aqless.tracing import TRACE_KEY
from tests.faults.cluster import Cluster
from tests.support.examples import span_exporter
from tests.support.sharding import (
    deployment,
    kept_elsewhere,
    key_per_shard,
    keys_of_a_shard,
    run_example,
)

pytestmark = pytest.mark.timeout(60)
pytest_plugins = ["tests.support.sharding_fixtures"]


async def test_a_named_rate_limit_lives_on_its_keeper_and_holds_there(cluster: Cluster) -> None:
    async with deployment(cluster, "limits") as client:
        keeper = client.keeper_of("api")
        await client.rate_limits["api"].set(2, per=60)
        for shard in range(3):
            info = await client.shard(shard).rate_limits["api"].get()
            assert info.limit == (2 if shard == keeper else 0), shard
        queue = client.queues["calls"]
        for _ in range(3):  # every job naming it goes where it is enforced
            jid = await queue.put("app.Call", {}, rate_limits=["api"])
            assert await client.shard_holding(jid) == keeper
        elsewhere = next(r for r in key_per_shard(client) if client.shard_of(r) != keeper)
        with pytest.raises(aqless.CrossShardError):
            await queue.put("app.Call", {}, rate_limits=["api"], route=elsewhere)
        assert len(await queue.pop_many(3)) == 2  # two starts in the minute
        used = await client.rate_limits["api"].get()
        assert (used.limit, used.period, used.used) == (2, 60.0, 2)
        await client.rate_limits["api"].delete()
        assert (await client.rate_limits["api"].get()).limit == 0


async def test_a_queues_rate_limit_is_on_its_pinned_shard_and_listed(cluster: Cluster) -> None:
    async with deployment(cluster, "qlimits") as client:
        name = kept_elsewhere(client)
        queue = client.queues[name]
        await queue.set_rate_limit(3, per=10)
        pin = client.shards.pin_of(name)
        assert pin is not None
        await client.rate_limits["smtp"].set(5)
        listed = await client.rate_limits.all()
        own = f"{client.shard(pin).prefix}q:{name}"
        assert [(info.id, info.limit) for info in listed] == sorted([("smtp", 5), (own, 3)])
        assert client.rate_limits.of_queue(name).id == own
        # an id read from the listing is found again on the shard it was read from
        assert (await client.rate_limits[own].get()).limit == 3
        assert (await queue.rate_limit.get()).period == 10.0
        # smooth, on the pinned shard as on a plain client
        await queue.set_rate_limit(3, per=10, smooth=True)
        assert (await client.rate_limits[own].get()).smooth
        await client.rate_limits["smtp"].set(5, smooth=True)
        assert all(info.smooth for info in await client.rate_limits.all())
        await client.rate_limits[own].delete()
        assert [info.id for info in await client.rate_limits.all()] == ["smtp"]


async def test_a_queues_throttle_id_is_found_on_its_shard(cluster: Cluster) -> None:
    async with deployment(cluster, "qthrottle") as client:
        name = kept_elsewhere(client)
        queue = client.queues[name]
        await queue.set_throttle(4)
        info = await queue.throttle()
        assert info.id.startswith(client.shard(client.shards.pinned[name]).prefix)
        assert (await client.throttles[info.id].get()).maximum == 4


async def test_queue_patterns_are_set_on_every_shard_and_read_from_the_first(
    cluster: Cluster,
) -> None:
    async with deployment(cluster, "patterns") as client:
        await client.queue_patterns.set_identifiers({"mail": ["mail-*", "!mail-spam"]})
        groups = [aqless.PriorityPattern(("urgent-*",)), aqless.PriorityPattern(("default",))]
        await client.queue_patterns.set_priorities(groups)
        for shard in client.clients:
            assert (await shard.queue_patterns.identifiers())["mail"] == ["mail-*", "!mail-spam"]
            assert await shard.queue_patterns.priorities() == groups
        assert (await client.queue_patterns.identifiers())["mail"] == ["mail-*", "!mail-spam"]
        assert await client.queue_patterns.priorities() == groups
        with pytest.raises(aqless.ConfigurationError):
            await client.queue_patterns.set_identifiers({"": ["x"]})
        await client.add_shards(1)  # a new shard takes the patterns with the configuration
        new = client.shard(3)
        assert (await new.queue_patterns.identifiers())["mail"] == ["mail-*", "!mail-spam"]
        assert await new.queue_patterns.priorities() == groups


def marking(calls: list[tuple[str, str, int]]) -> Any:
    """A put hook that notes each call in `calls` (the queue's type and name, how many
    jobs) and marks each job's data ``hooked``."""

    async def marked(queue: Any, requests: list[PutRequest], send: PutSender) -> list[str]:
        calls.append((type(queue).__name__, queue.name, len(requests)))
        return await send([replace(r, data={**r.data, "hooked": True}) for r in requests])

    return marked


async def test_a_put_hook_wraps_each_put_once_before_it_is_placed(cluster: Cluster) -> None:
    calls: list[tuple[str, str, int]] = []
    marked = marking(calls)

    async with deployment(cluster, "hooks") as client:
        client.put_hooks.append(marked)
        queue = client.queues["hooked"]
        routes = key_per_shard(client)
        jids = [await queue.put("app.Work", {"n": n}, route=r) for n, r in enumerate(routes)]
        jids += await queue.put_many(PutRequest("app.Work", {"n": n}) for n in range(3, 9))
        assert calls == [("ShardedQueue", "hooked", 1)] * 3 + [("ShardedQueue", "hooked", 6)]
        jobs = await client.jobs.get_many(jids)
        assert [job.data for job in jobs] == [{"n": n, "hooked": True} for n in range(9)]
        assert {client.shard_of(job.jid) for job in jobs} == {0, 1, 2}


async def test_a_put_hook_wraps_each_job_of_a_sharded_flow(cluster: Cluster) -> None:
    """A flow on a sharded deployment goes through its hooks (given ShardedQueues), one
    queue's jobs at a time, and the whole flow still lands on one shard."""
    calls: list[tuple[str, str, int]] = []
    marked = marking(calls)

    async with deployment(cluster, "flowhooks") as client:
        client.put_hooks.append(marked)
        flow = await client.flows.put(
            FlowNode("app.Parent", {"n": 0}, queue="parents"),
            [FlowNode("app.Child", {"n": n}, queue="children") for n in (1, 2)],
        )
        assert calls == [("ShardedQueue", "parents", 1), ("ShardedQueue", "children", 2)]
        jobs = await client.jobs.get_many(list(flow.jids))
        assert [job.data for job in jobs] == [{"n": n, "hooked": True} for n in range(3)]
        assert len({await client.shard_holding(jid) for jid in flow.jids}) == 1


async def test_a_put_hooks_change_decides_where_the_job_goes(cluster: Cluster) -> None:
    async def throttled(queue: Any, requests: list[PutRequest], send: PutSender) -> list[str]:
        return await send([replace(r, throttles=[name]) for r in requests])

    async with deployment(cluster, "hookplace") as client:
        name = keys_of_a_shard(client, 2, "smtp-")[0]
        client.put_hooks.append(throttled)
        queue = client.queues["q"]
        jids = [await queue.put("app.Work", {}) for _ in range(4)]
        jids += await queue.put_many([PutRequest("app.Work", {})] * 4)
        for jid in jids:
            assert await client.shard_holding(jid) == client.keeper_of(name) == 2
            found = await client.shard(2).jobs.get(jid)
            assert isinstance(found, aqless.Job)
            assert name in found.throttles


async def test_tracing_instruments_a_sharded_client(cluster: Cluster) -> None:
    span_exporter().clear()
    async with deployment(cluster, "traced") as client:
        tracing.instrument(client)
        tracing.instrument(client)  # once
        jid = await client.queues["t"].put("app.Work", {"n": 1})
        job = await client.jobs.get(jid)
        assert isinstance(job, aqless.Job)
        assert TRACE_KEY in job.data
        spans = [s for s in span_exporter().get_finished_spans() if s.name == "send t"]
        assert len(spans) == 1
        assert spans[0].attributes is not None
        assert spans[0].attributes["messaging.message.id"] == jid


def test_the_limits_example_starts_what_the_minute_allows(cluster: Cluster) -> None:
    result = run_example(cluster, "sharded_limits.py")
    assert "called 3 of 6 this minute, each from billing" in result.stdout
    assert "used 3 of 3" in result.stdout
    assert "a pop now gets 0 (the limit holds)" in result.stdout
    assert "not started yet: 3" in result.stdout
