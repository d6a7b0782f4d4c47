"""One view of a sharded deployment (aqless._concurrency.routing, aqless.events.sharded) on a real
three-primary Valkey Cluster: merged statistics, listings, failures, tags, tracking,
workers, the per-shard report and the merged event stream."""

from __future__ import annotations

import statistics
from collections.abc import Iterator

import anyio
import pytest

import aqless
from aqless._concurrency.routing import gathered, interleaved
from aqless.client import TAG_PAGE
from aqless.events import Event
from aqless.models import Durations
from tests.faults.cluster import Cluster
from tests.support.sharding import addresses, deployment

pytestmark = pytest.mark.timeout(60)
pytest_plugins = ["tests.support.sharding_fixtures"]

DAY = 1_700_006_400.0  # a midnight (UTC)


class Clock:
    """A clock the test moves: every shard's client sends its `now`."""

    def __init__(self) -> None:
        self.now = DAY + 3600

    def __call__(self) -> float:
        return self.now


def routes(client: aqless.ShardedClient) -> list[str]:
    """A routing key for each shard, in shard order."""
    found: dict[int, str] = {}
    keys: Iterator[str] = (f"route-{n}" for n in range(10_000))
    while len(found) < 3:
        key = next(keys)
        found.setdefault(client.shard_of(key), key)
    return [found[shard] for shard in range(3)]


# -- without a cluster -------------------------------------------------------------------------


def test_interleaving_takes_one_of_each_list_in_turn() -> None:
    assert interleaved([["a1", "a2", "a3"], [], ["c1"], ["d1", "d2"]]) == [
        "a1",
        "c1",
        "d1",
        "a2",
        "d2",
        "a3",
    ]
    assert interleaved([]) == []


def test_merged_durations_are_those_of_all_the_samples_at_once() -> None:
    samples = [[1.0, 2.0, 4.0], [10.0], [], [3.0, 3.0, 7.0, 9.0]]

    def durations(values: list[float]) -> Durations:
        std = statistics.stdev(values) if len(values) > 1 else 0.0
        mean = statistics.fmean(values) if values else 0.0
        return Durations(len(values), mean, std, (len(values), 1))

    merged = Durations.merged([durations(values) for values in samples])
    every = [value for values in samples for value in values]
    assert merged.count == len(every)
    assert merged.mean == pytest.approx(statistics.fmean(every))
    assert merged.std == pytest.approx(statistics.stdev(every))
    assert merged.histogram == (len(every), 4)
    assert Durations.merged([durations([]), durations([])]) == Durations(0, 0.0, 0.0, (0, 2))
    assert Durations.merged([durations([5.0])]).std == 0.0


async def test_the_shards_are_read_at_once() -> None:
    started = 0
    everyone = anyio.Event()

    async def read(n: int) -> int:
        nonlocal started
        started += 1
        if started == 3:
            everyone.set()
        await everyone.wait()  # one read after the other would wait here for ever
        return n * 10

    with anyio.fail_after(5):
        assert await gathered([1, 2, 3], read) == [10, 20, 30]


# -- on the cluster ----------------------------------------------------------------------------


async def test_a_queues_stats_merge_every_shards_exactly(cluster: Cluster) -> None:
    clock = Clock()
    async with aqless.ShardedClient(
        addresses(cluster), deployment="vstats", shards=3, clock=clock
    ) as client:
        queue = client.queues["work"]
        waits: list[float] = []
        for shard, route in enumerate(routes(client)):
            for n in range(shard + 2):  # 2, 3 and 4 jobs: the shards weigh differently
                clock.now = DAY + 3600
                await queue.put("app.Work", {}, route=route)
                clock.now = DAY + 3600 + 10 * shard + 3 * n  # each waited a different time
                popped = await queue.partition(shard).pop()
                assert popped is not None
                waits.append(clock.now - (DAY + 3600))
                if n == 0:
                    await popped.fail("app.Error", "no")
                else:
                    await popped.complete()
        parts = [await partition.stats() for partition in queue.partitions]
        assert all(part.wait.count > 0 for part in parts)
        merged = await queue.stats()
        assert merged.wait.count == len(waits) == 9
        assert merged.wait.mean == pytest.approx(statistics.fmean(waits))
        assert merged.wait.std == pytest.approx(statistics.stdev(waits))
        assert merged.wait.histogram == tuple(
            sum(column) for column in zip(*(part.wait.histogram for part in parts), strict=True)
        )
        assert merged.run.count == 6  # the completed ones
        assert merged.failed == 3
        assert merged.failures == 3
        assert (await queue.stats(DAY - 86_400)).wait.count == 0  # the day before


async def test_listings_are_interleaved_pages_over_every_shard(cluster: Cluster) -> None:
    async with deployment(cluster, "vpages") as client:
        queue = client.queues["later"]
        on_shard = routes(client)
        jids = [
            await queue.put("app.Work", {"n": n}, delay=600 + n, route=on_shard[n % 3])
            for n in range(20)
        ]
        own = [await p.jobs("scheduled", count=100) for p in queue.partitions]
        assert sorted(jid for jids_of in own for jid in jids_of) == sorted(jids)
        everything = await queue.jobs("scheduled", count=100)
        assert everything == interleaved(own)
        pages = [await queue.jobs("scheduled", offset=o, count=6) for o in range(0, 24, 6)]
        assert [jid for page in pages for jid in page] == everything  # stable, no overlap
        assert [client.shard_of(jid) for jid in everything[:3]] == [0, 1, 2]
        peeked = await client.queues["later"].peek(4)
        assert peeked == []  # nothing waits yet
        for route in routes(client):
            await queue.put_many(
                [aqless.PutRequest("app.Work", {"n": n}) for n in range(2)], route=route
            )
        peeked = await queue.peek(3)
        assert sorted(client.shard_of(job.jid) for job in peeked) == [0, 1, 2]
        for count, offset in ((0, 0), (-1, 0), (1, -1)):
            with pytest.raises(aqless.InvalidValueError):  # refused before any shard is asked
                await queue.jobs("scheduled", count=count, offset=offset)
        waiting = await queue.jobs("waiting", count=100)  # every state is listed
        assert waiting[:3] == [job.jid for job in peeked]
        assert len(waiting) == 6
        (failing,) = await queue.pop_many(1, worker="w")
        await failing.fail("app.Boom", "boom")
        assert await queue.jobs("failed") == [failing.jid]


async def test_failures_tags_completed_and_tracking_over_every_shard(cluster: Cluster) -> None:
    async with deployment(cluster, "vfail") as client:
        queue = client.queues["work"]
        jids = [
            jid
            for route in routes(client)
            for jid in await queue.put_many(
                [aqless.PutRequest("app.Work", {"n": n}, tags=["vip"]) for n in range(4)],
                route=route,
            )
        ]
        popped = await queue.pop_many(12)
        assert len(popped) == 12
        for n, job in enumerate(popped):
            if n < 5:
                await job.fail("app.Timeout", "slow")
            elif n < 7:
                await job.fail("app.Crash", "boom")
            else:
                await job.complete()
        assert await client.jobs.failure_groups() == {"app.Timeout": 5, "app.Crash": 2}
        timeouts = {job.jid for job in popped[:5]}
        first = await client.jobs.failed("app.Timeout", count=3)
        rest = await client.jobs.failed("app.Timeout", offset=3, count=3)
        assert (first.total, rest.total) == (5, 5)
        assert len(first.jids) == 3
        assert set(first.jids) | set(rest.jids) == timeouts
        assert len(set(first.jids) | set(rest.jids)) == 5

        completed = await client.jobs.completed(count=50)
        assert sorted(completed) == sorted(job.jid for job in popped[7:])
        assert await client.jobs.completed(offset=2, count=2) == completed[2:4]

        tagged = await client.jobs.tagged("vip", count=50)
        assert tagged.total == 12
        assert sorted(tagged.jids) == sorted(jids)
        again = await client.jobs.tagged("vip", offset=10, count=5)
        assert (again.total, list(again.jids)) == (12, list(tagged.jids[10:]))
        by_shard = [[jid for jid in jids if client.shard_of(jid) == k] for k in range(3)]
        tagging = {"rare": [*by_shard[0][:2], by_shard[1][0]], "pair": by_shard[1][:2]}
        for tag, some in tagging.items():
            for jid in some:
                live = await client.jobs.get(jid)
                assert isinstance(live, aqless.Job)
                await live.tag(tag)
        assert (await client.jobs.tagged("rare")).total == 3
        # rare: 2 + 1 jobs on two shards ranks above pair: 2 on one
        assert await client.tags.top() == ["vip", "rare", "pair"]
        assert await client.tags.top(offset=1, count=1) == ["rare"]

        for jid in jids[:4]:
            found = await client.jobs.get(jid)
            assert isinstance(found, aqless.Job)
            await found.track()
        tracked, expired = await client.jobs.tracked()
        assert sorted(job.jid for job in tracked) == sorted(jids[:4])
        assert all(job.client is client.shard(client.shard_of(job.jid)) for job in tracked)
        assert expired == []
        assert await client.queues.names() == ["work"]


async def test_workers_are_merged_by_name(cluster: Cluster) -> None:
    async with deployment(cluster, "vworkers") as client:
        queue = client.queues["work"]
        for route in routes(client):
            await queue.put_many([aqless.PutRequest("app.Work", {}) for _ in range(3)], route=route)
        mine = await queue.pop_many(6, worker="ann")
        theirs = await queue.pop_many(3, worker="bob")
        assert len({client.shard_of(job.jid) for job in mine}) == 3
        counts = {w.name: (w.jobs, w.stalled) for w in await client.workers.counts()}
        assert counts == {"ann": (6, 0), "bob": (3, 0)}
        held = await client.workers.jobs("ann")
        assert sorted(held.jobs) == sorted(job.jid for job in mine)
        assert held.stalled == ()
        for job in theirs:
            await job.complete()
        await client.workers.forget("bob")
        assert [w.name for w in await client.workers.counts()] == ["ann"]


async def test_the_shard_report_shows_the_shard_that_lags(cluster: Cluster) -> None:
    clock = Clock()
    async with aqless.ShardedClient(
        addresses(cluster), deployment="vreport", shards=3, clock=clock
    ) as client:
        on_shard = routes(client)
        queue = client.queues["work"]
        await queue.put("app.Work", {}, route=on_shard[2])  # waits an hour
        clock.now += 3600
        for route in on_shard:
            await queue.put("app.Work", {}, route=route)
        await client.queues["other"].put("app.Work", {}, route=on_shard[1], delay=60)
        clock.now += 5
        reports = await client.shard_report()
        assert [r.id for r in reports] == [0, 1, 2]
        assert [r.namespace for r in reports] == [s.namespace for s in client.shards.shards]
        assert [r.waiting for r in reports] == [1, 1, 2]
        assert [r.scheduled for r in reports] == [0, 1, 0]
        assert reports[2].lag == pytest.approx(3605)
        assert reports[0].lag == pytest.approx(5)
        ports = {int(r.node.rsplit(":", 1)[1]) for r in reports}
        assert ports == set(cluster.ports)  # a primary each
        assert all(r.used_memory is not None and r.used_memory > 0 for r in reports)
        assert {c.name for c in reports[1].queues} == {"work", "other"}


async def test_a_put_on_each_shard_comes_through_one_merged_stream(cluster: Cluster) -> None:
    async with deployment(cluster, "vevents") as client:
        queue = client.queues["work"]
        async with client.events("log") as events:
            assert len(events.channels) == 3
            jids = [await queue.put("app.Work", {}, route=route) for route in routes(client)]
            puts: list[Event] = []
            with anyio.fail_after(10):
                async for event in events:
                    if event.kind == "put":
                        puts.append(event)
                    if len(puts) == 3:
                        break
        assert sorted(event.jid or "" for event in puts) == sorted(jids)
        assert all(isinstance(event, Event) for event in puts)
        assert {event.queue for event in puts} == {"work"}
        assert {event.channel for event in puts} == {
            f"{shard.namespace}:ql:log" for shard in client.shards.shards
        }
        with pytest.raises(aqless.ConfigurationError, match="async with"):
            await anext(client.events())


async def test_top_tags_rank_tags_no_single_shard_ranks(cluster: Cluster) -> None:
    """A tag on one job of each shard (3 in all) is carried by 2 jobs on none: it ranks
    by its summed counter all the same; a tag on one job in all is not there."""
    async with deployment(cluster, "vtop") as client:
        queue = client.queues["work"]
        on_shard = routes(client)
        for route in on_shard:
            await queue.put("app.Work", {}, route=route, tags=["spread"])
        for tag in ("pair", "also"):  # two jobs on shard 0: a tie, ordered by name
            for _ in range(2):
                await queue.put("app.Work", {}, route=on_shard[0], tags=[tag])
        await queue.put("app.Work", {}, route=on_shard[1], tags=["alone"])
        await queue.put("app.Work", {}, route=on_shard[2], tags=["split"])
        await queue.put("app.Work", {}, route=on_shard[1], tags=["split"])
        assert await client.tags.top() == ["spread", "split", "pair", "also"]
        assert await client.tags.top(count=1) == ["spread"]
        assert await client.tags.top(offset=2, count=5) == ["pair", "also"]


async def test_top_tags_are_exact_when_a_shard_has_more_tags_than_a_page(
    cluster: Cluster,
) -> None:
    """Shards 0 and 1 each have a page of tags on two jobs, then `x` on one: the first
    pages leave `x` unread on both, yet its total (2) ties theirs and its name ranks
    first; the ranking reads on until no unread tag can rank."""
    async with deployment(cluster, "vtoppages") as client:
        queue = client.queues["work"]
        on_shard = routes(client)
        for route, letter in zip(on_shard[:2], "tu", strict=True):
            page = [f"{letter}{n:03}" for n in range(TAG_PAGE)]
            for _ in range(2):
                await queue.put("app.Work", {}, route=route, tags=page)
            await queue.put("app.Work", {}, route=route, tags=["x"])
        last = f"u{TAG_PAGE - 1:03}"
        assert await client.tags.top(count=3) == ["x", last, f"u{TAG_PAGE - 2:03}"]
        assert await client.tags.top(offset=1, count=1) == [last]


async def test_checkpoints_are_read_from_each_jobs_shard(cluster: Cluster) -> None:
    async with deployment(cluster, "vcheckpoints") as client:
        queue = client.queues["imports"]
        for route in routes(client):
            await queue.put("app.Import", {}, route=route)
        popped = await queue.pop_many(3, worker="w")
        assert sorted(client.shard_of(job.jid) for job in popped) == [0, 1, 2]
        for n, job in enumerate(popped):
            await job.checkpoint({"offset": n})
        jids = [job.jid for job in popped]
        assert await client.jobs.checkpoints(*jids, "missing") == {
            jid: {"offset": n} for n, jid in enumerate(jids)
        }
        await popped[0].hand_back("deploy")
        (again,) = await queue.pop_many(1, worker="w")
        assert (again.jid, again.checkpointed) == (jids[0], {"offset": 0})


async def test_verbs_of_several_jids_given_none_answer_as_a_plain_client_does(
    cluster: Cluster,
) -> None:
    async with deployment(cluster, "vnojids") as client:
        assert await client.jobs.get_many([]) == []
        assert await client.jobs.progress() == {}
        assert await client.jobs.checkpoints() == {}
        assert await client.jobs.cancel() == []
