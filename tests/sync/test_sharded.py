"""aqless.sync.ShardedClient on a real three-primary Valkey Cluster: puts over every shard,
routing and its typed refusals, lookups, pops whose jobs complete on their own shard, the
deployment's configuration and throttles, several threads at once, and a forked child.

One cluster for the session (tests.support.sharding_fixtures); each test has a deployment of
its own."""

from __future__ import annotations

import os
import re
import uuid
from collections import Counter
from collections.abc import Iterator

import pytest

import aqless
import aqless.sync
from tests.faults.cluster import Cluster
from tests.support.clients import in_a_forked_child, put_from_threads
from tests.support.sharding import addresses, run_docs_snippet, run_example

pytestmark = pytest.mark.timeout(60)
pytest_plugins = ["tests.support.sharding_fixtures"]


@pytest.fixture
def client(cluster: Cluster) -> Iterator[aqless.sync.ShardedClient]:
    name = f"sync{uuid.uuid4().hex[:8]}"
    with aqless.sync.ShardedClient(addresses(cluster), deployment=name, shards=3) as sync:
        yield sync


def route_per_shard(client: aqless.sync.ShardedClient) -> list[str]:
    """One routing key falling on each of the three shards, by shard id."""
    routes: dict[int, str] = {}
    for key in (f"route-{n}" for n in range(1000)):
        routes.setdefault(client.shard_of(key), key)
        if len(routes) == 3:
            return [routes[shard] for shard in range(3)]
    raise AssertionError(f"no key for every shard: {routes}")


def length_on(client: aqless.sync.ShardedClient, shard: int, queue: str) -> int:
    return client.call(lambda sharded: sharded.shard(shard).queues[queue].length())


def test_puts_spread_over_every_shard_and_counts_sum_them(
    client: aqless.sync.ShardedClient,
) -> None:
    queue = client.queues["work"]
    jids = [queue.put("app.Work", {"n": n}) for n in range(24)]
    jids += queue.put_many([aqless.PutRequest("app.Work", {"n": n}) for n in range(24, 30)])
    assert len(set(jids)) == 30
    by_shard = Counter(client.shard_of(jid) for jid in jids)
    assert set(by_shard) == {0, 1, 2}
    assert [length_on(client, shard, "work") for shard in range(3)] == [
        by_shard[shard] for shard in range(3)
    ]
    assert queue.length() == 30
    assert queue.counts().waiting == 30
    assert [(c.name, c.waiting) for c in client.queues.counts()] == [("work", 30)]
    assert client.queues.names() == ["work"]
    report = client.shard_report()
    assert [part.waiting for part in report] == [by_shard[shard] for shard in range(3)]


def test_a_cross_shard_put_is_refused_with_nothing_written(
    client: aqless.sync.ShardedClient,
) -> None:
    queue = client.queues["work"]
    routes = route_per_shard(client)
    first = queue.put("app.A", route=routes[0])
    second = queue.put("app.B", route=routes[1])
    assert (client.shard_of(first), client.shard_of(second)) == (0, 1)
    with pytest.raises(aqless.CrossShardError, match=r"shard 0.*shard 1"):
        queue.put("app.C", depends=[first, second])
    with pytest.raises(aqless.CrossShardError):
        queue.put("app.C", depends=[first], route=routes[2])
    with pytest.raises(aqless.CrossShardError):  # the whole batch is placed first
        queue.put_many(
            [aqless.PutRequest("app.D"), aqless.PutRequest("app.E", depends=[first, second])]
        )
    assert queue.length() == 2
    assert queue.counts().depends == 0
    dependent = queue.put("app.C", depends=[first])  # its dependency's shard
    assert client.shard_of(dependent) == 0
    assert client.call(lambda sharded: sharded.shard(0).queues["work"].counts()).depends == 1


def test_jobs_are_found_by_jid_on_their_shard(client: aqless.sync.ShardedClient) -> None:
    queue = client.queues["work"]
    jids = [
        queue.put("app.Work", {"route": route}, route=route) for route in route_per_shard(client)
    ]
    for jid, route in zip(jids, route_per_shard(client), strict=True):
        job = client.jobs.get(jid)
        assert isinstance(job, aqless.sync.SyncJob)
        assert (job.jid, job.data, job.state) == (jid, {"route": route}, "waiting")
    assert client.jobs.get("missing") is None
    assert [job.jid for job in client.jobs.get_many([jids[2], "missing", jids[0]])] == [
        jids[2],
        jids[0],
    ]
    tagged = client.jobs.get(jids[1])
    assert isinstance(tagged, aqless.sync.SyncJob)
    assert tagged.tag("vip") == ("vip",)  # a verb on the job's own shard
    assert client.call(lambda sharded: sharded.shard(1).jobs.tagged("vip")).jids == (jids[1],)
    client.jobs.cancel(jids[0], jids[2])
    assert [job.jid for job in client.jobs.get_many(jids)] == [jids[1]]
    rjid = client.queues["reports"].recur("app.Daily", interval=3600)
    recurring = client.jobs.get(rjid)
    assert isinstance(recurring, aqless.sync.SyncRecurringJob)
    assert recurring.interval == 3600
    recurring.cancel()
    assert client.jobs.get(rjid) is None


def test_popped_jobs_complete_and_fail_on_their_own_shard(
    client: aqless.sync.ShardedClient,
) -> None:
    queue = client.queues["work"]
    jids = [queue.put("app.Work", route=route) for route in route_per_shard(client)]
    with pytest.raises(aqless.InvalidValueError, match="count"):
        queue.pop_many(0)
    first = queue.pop()
    assert isinstance(first, aqless.sync.SyncJob)
    assert first.state == "running"
    rest = queue.pop_many(5)
    assert sorted(job.jid for job in [first, *rest]) == sorted(jids)
    assert queue.pop() is None
    assert first.heartbeat() > 0
    assert first.complete(result={"ok": True}) == aqless.JobState.COMPLETE
    assert first.state == aqless.JobState.COMPLETE
    assert client.wait(first.jid) == aqless.JobState.COMPLETE
    assert client.result(first.jid) == {"ok": True}
    rest[0].fail("app.Broken", "it broke")
    refreshed = client.jobs.get(rest[0].jid)
    assert isinstance(refreshed, aqless.sync.SyncJob)
    assert refreshed.state == "failed"
    rest[1].complete()
    assert queue.counts().running == 0
    assert queue.stats().failed == 1


def test_the_deployments_config_throttles_and_pause(client: aqless.sync.ShardedClient) -> None:
    client.config.set("heartbeat", 90)
    with pytest.raises(aqless.ConfigValueError):
        client.config.set("heartbeat", "banana")
    assert client.config.get("heartbeat") == "90"
    assert client.call(lambda sharded: sharded.shard(2).config.get("heartbeat")) == "90"
    assert client.config.all()["heartbeat"] == "90"
    client.config.unset("heartbeat")
    assert client.config.get("heartbeat") == "60"
    smtp = client.throttles["smtp"]
    smtp.set(2)
    assert smtp.get().maximum == 2
    queue = client.queues["mail"]
    jid = queue.put("app.Mail", throttles=["smtp"])  # on the shard keeping the throttle
    assert queue.pop() is not None
    assert smtp.locks() == [jid]
    assert smtp.pending() == []
    smtp.delete()
    assert smtp.get().maximum == 0
    queue.put("app.Mail")
    assert queue.pause() == []
    assert queue.counts().paused
    assert queue.pop() is None
    queue.unpause()
    assert queue.pop() is not None


def test_threads_share_the_client(client: aqless.sync.ShardedClient) -> None:
    queue = client.queues["bulk"]
    jids = put_from_threads(queue, 10, 10)
    assert len(set(jids)) == 100
    assert queue.length() == 100
    assert {job.jid for job in client.jobs.get_many(jids)} == set(jids)
    assert {client.shard_of(jid) for jid in jids} == {0, 1, 2}


def test_a_forked_childs_first_call_works(client: aqless.sync.ShardedClient) -> None:
    queue = client.queues["q"]
    parent_jid = queue.put("app.Parent", route=route_per_shard(client)[2])
    snapshot = client.jobs.get(parent_jid)  # read through the parent's shard client
    assert isinstance(snapshot, aqless.sync.SyncJob)

    def child() -> str:  # its first call opens a deployment of its own
        jid = queue.put("app.Child", {"pid": os.getpid()})
        snapshot.tag("from-child")  # the job's verbs go to the child's own shard client
        client.close()
        return jid

    pid, child_jid = in_a_forked_child(child)
    job = client.jobs.get(child_jid)
    assert isinstance(job, aqless.sync.SyncJob)
    assert job.data == {"pid": pid}
    assert snapshot.refresh().tags == ("from-child",)
    assert queue.length() == 2  # the child's close left the parent's client alone


def test_bad_arguments_are_refused_before_connecting() -> None:
    with pytest.raises(aqless.ConfigurationError, match="shards"):
        aqless.sync.ShardedClient([("127.0.0.1", 1)], deployment="d", shards=0)
    with pytest.raises(aqless.ConfigurationError):
        aqless.sync.ShardedClient([("127.0.0.1", 1)], deployment="{bad}")


def test_the_docs_blocking_sharded_example_runs_on_a_cluster(cluster: Cluster) -> None:
    deployment = repr(f"sync{uuid.uuid4().hex[:8]}")
    run_docs_snippet(cluster, "tests/sync/test_sharded.py", {'"billing"': deployment})


def test_the_sync_sharded_example_runs(cluster: Cluster) -> None:
    result = run_example(cluster, "sync_sharded.py")
    assert "waiting over every shard: 24" in result.stdout
    assert "a dependency on another shard: refused, nothing put" in result.stdout
    assert "completed 24; waiting now: 0" in result.stdout
    spread = re.search(r"customers per shard: (.*)", result.stdout)
    assert spread is not None, result.stdout
    assert sum(int(part.split(": ")[1]) for part in spread.group(1).split(", ")) == 8


def test_put_results_tell_a_deduplicated_put_on_the_dedup_ids_shard(
    client: aqless.sync.ShardedClient,
) -> None:
    """`put_result` and `put_many_results` say which puts made no job: a dedup id is kept
    on one shard, so a second put with it finds the first job wherever its jid falls."""
    queue = client.queues["mail"]
    first = queue.put_result("app.Mail", {"n": 1}, dedup="welcome-7")
    again = queue.put_result("app.Mail", {"n": 2}, dedup="welcome-7")
    assert not first.deduplicated
    assert (again.jid, again.deduplicated) == (first.jid, True)
    assert client.shard_of(first.jid) == client.shard_of("welcome-7")
    results = queue.put_many_results(
        [
            aqless.PutRequest("app.Mail", {"n": 3}, dedup="welcome-7"),
            aqless.PutRequest("app.Mail", {"n": 4}, dedup="welcome-8"),
            aqless.PutRequest("app.Mail", {"n": 5}),
        ]
    )
    assert [(r.jid == first.jid, r.deduplicated) for r in results] == [
        (True, True),
        (False, False),
        (False, False),
    ]
    assert queue.length() == 3
    assert queue.put_many([aqless.PutRequest("app.Mail", dedup="welcome-8")]) == [results[1].jid]


def test_a_put_that_never_replaces_leaves_the_jids_job_on_its_shard_alone(
    client: aqless.sync.ShardedClient,
) -> None:
    """``replace=False`` (the put to retry after a lost reply): a job of the jid exists on
    its shard, finished or not, so the put changes nothing and says so."""
    queue = client.queues["mail"]
    jid = queue.put("app.Mail", {"n": 1}, jid="once-7", replace=False)
    again = queue.put_result("app.Mail", {"n": 2}, jid=jid, replace=False)
    assert (again.jid, again.deduplicated) == (jid, True)
    (job,) = queue.pop_many(1)
    job.complete()
    (retried,) = queue.put_many_results([aqless.PutRequest("app.Mail", jid=jid, replace=False)])
    assert retried.deduplicated
    stored = client.jobs.get(jid)
    assert isinstance(stored, aqless.sync.SyncJob)
    assert (str(stored.state), stored.data) == ("complete", {"n": 1})
    assert queue.length() == 0


def test_the_verbs_a_sharded_queue_gained_act_on_every_shard(
    client: aqless.sync.ShardedClient,
) -> None:
    queue = client.queues["mended"]
    routes = route_per_shard(client)
    jids = [queue.put("app.Mend", route=route) for route in routes]
    for job in queue.pop_many(len(jids)):
        job.fail("broken", "on its own shard")
    failed = client.jobs.failed("broken")
    assert sorted(failed.jids) == sorted(jids)
    assert client.jobs.failure_groups() == {"broken": len(jids)}
    assert queue.unfail("broken", count=len(jids) - 1) == len(jids) - 1
    assert queue.unfail("broken") == 1
    assert queue.length() == len(jids)
    queue.set_heartbeat(7)

    async def heartbeats(sharded: aqless.ShardedClient) -> list[float]:
        return [await shard.queues["mended"].heartbeat() for shard in sharded.clients]

    assert client.call(heartbeats) == [7.0] * len(routes)
    done = queue.pop()
    assert done is not None
    done.complete(result={"ok": True})
    assert client.jobs.completed() == [done.jid]
    assert client.jobs.stored_result(done.jid) is not None
    client.jobs.cancel(*[jid for jid in jids if jid != done.jid])
    queue.forget()
    assert "mended" not in client.queues.names()


def test_a_groups_rate_limit_holds_on_its_shard(client: aqless.sync.ShardedClient) -> None:
    queue = client.queues["paced"]
    queue.set_group_rate_limit("tenant", 3, per=60)
    queue.put_many([aqless.PutRequest("app.Work", {"g": "tenant"}, group="tenant")] * 5)
    queue.put_many([aqless.PutRequest("app.Work", {"g": "other"}, group="other")] * 5)
    popped = queue.pop_many(10)
    assert Counter(job.data["g"] for job in popped) == {"tenant": 3, "other": 5}
    (tenant,) = [group for group in queue.groups() if group.name == "tenant"]
    assert (tenant.waiting, tenant.rate_limit, tenant.rate_used) == (2, 3, 3)
    queue.set_group_rate_limit("tenant", None)
    assert len(queue.pop_many(10)) == 2
