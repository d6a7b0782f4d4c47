"""Cluster: a three-primary Valkey Cluster on loopback; two deployments with different hash
tags (``{a}`` and ``{b}``) land on different nodes, and each runs the whole lifecycle there at
the same time: put, pop, heartbeat, complete, events, ``wait``, and a real Worker that picks
jobs up from put events and drains them. A namespace without a hash tag is refused."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import anyio
import pytest
import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.crc import key_slot

import aqless
from aqless._connection.cluster import hash_tag
from aqless.events import Event, EventStream
from tests.faults.cluster import SLOTS, Cluster, move_slot, valkey_cluster
from tests.faults.harness import ask
from tests.support.connection_kinds import (
    assert_a_worker_is_pushed_its_job,
    assert_script_calls_go_lean,
)
from tests.support.worker_processes import eventually

pytestmark = [pytest.mark.faults, pytest.mark.timeout(60)]

DEPLOYMENTS = ("{a}", "{b}")
JOBS = 200


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with valkey_cluster() as running:
        yield running


def addresses(cluster: Cluster) -> list[tuple[str, int]]:
    return [("127.0.0.1", port) for port in cluster.ports]


def home(cluster: Cluster, namespace: str) -> int:
    """The port of the node that holds the namespace's slot."""
    return cluster.port_for_slot(key_slot(f"{namespace}:ql:".encode()))


def test_the_two_hash_tags_land_on_different_nodes(cluster: Cluster) -> None:
    homes = [home(cluster, namespace) for namespace in DEPLOYMENTS]
    assert len(set(homes)) == 2
    for namespace, port in zip(DEPLOYMENTS, homes, strict=True):
        slot = ask(port, "CLUSTER", "KEYSLOT", f"{namespace}:ql:j:some-jid")
        first, last = SLOTS[cluster.ports.index(port)]
        assert isinstance(slot, int)
        assert first <= slot <= last


async def test_two_deployments_run_the_whole_lifecycle_each_on_its_node(
    cluster: Cluster,
) -> None:
    for port in cluster.ports:
        ask(port, "FUNCTION", "FLUSH")  # each deployment finds it missing and loads it
        ask(port, "CONFIG", "RESETSTAT")
    async with anyio.create_task_group() as deployments:
        for namespace in DEPLOYMENTS:
            deployments.start_soon(lifecycle, cluster, namespace)
    for port in cluster.ports:
        keys = ask(port, "KEYS", "*")
        assert isinstance(keys, list)
        # every key of a deployment is on its home node, and nothing anywhere else
        expected = [ns for ns in DEPLOYMENTS if home(cluster, ns) == port]
        assert {key.split(":", 1)[0] for key in keys} == set(expected)
        # the library is where a deployment's calls go, loaded there when they missed it
        library = ask(port, "FUNCTION", "LIST")
        assert isinstance(library, list)
        assert len(library) == (1 if expected else 0)
        stats = ask(port, "INFO", "commandstats")
        assert isinstance(stats, dict)
        loads = stats.get("cmdstat_function|load", {"calls": 0})["calls"]
        assert (1 <= loads <= len(DEPLOYMENTS)) if expected else loads == 0
        # calls name their node: redis-py never asks a server where FCALL's keys are
        assert "cmdstat_command|getkeys" not in stats
        if expected:
            # the puts (up to 100 a call) and the outcomes (several joined in one, or one each)
            assert stats["cmdstat_fcall"]["calls"] > JOBS // 100


async def lifecycle(cluster: Cluster, namespace: str) -> None:
    nodes = addresses(cluster)
    done = f"{namespace}:done"  # the jobs' side effect, in the deployment's slot
    async with aqless.Client.from_cluster(nodes, namespace=namespace) as client:
        queue = client.queues["jobs"]
        async with client.events("log") as events:
            jid = await queue.put("app.Work", {"by": "hand"})
            job = await queue.pop()
            assert job is not None
            assert job.jid == jid
            assert job.data == {"by": "hand"}
            await job.heartbeat()
            await job.complete()
            finished = await client.jobs.get(jid)
            assert isinstance(finished, aqless.Job)
            assert finished.state == "complete"
            with anyio.fail_after(10):
                seen = [(event.kind, event.jid) async for event in until_completed(events, jid)]
        assert ("put", jid) in seen
        assert ("completed", jid) in seen
        assert set(events.channels) == {f"{namespace}:ql:log"}

        handlers = aqless.Handlers()

        @handlers.register("app.Work")
        async def work(job: aqless.Job) -> None:
            await job.client.redis.rpush(done, job.jid)

        # A poll interval longer than the test: the worker can only hear of the jobs put
        # after it went idle through the put events on its event stream.
        worker_client = aqless.Client.from_cluster(
            nodes, namespace=namespace, worker_name=f"worker-{namespace}"
        )
        worker = aqless.Worker(
            worker_client, ["jobs"], handlers=handlers, concurrency=20, interval=120
        )
        async with worker_client, anyio.create_task_group() as tasks:
            tasks.start_soon(worker.run)
            await eventually(
                lambda: _listeners(cluster, f"{namespace}:ql:log") == 1, 10, "the worker idle"
            )
            jids = await queue.put_many(
                [aqless.PutRequest("app.Work", {"n": n}) for n in range(JOBS)]
            )
            last = jids[-1]
            assert await client.wait(last, timeout=20) == aqless.JobState.COMPLETE
            await eventually(
                lambda: _length(client, done, JOBS), 20, f"{JOBS} side effects in {namespace}"
            )
            worker.stop()
        assert worker.counters.completed == JOBS
        assert sorted(await client.redis.lrange(done, 0, -1)) == sorted(jids)
        counts = await queue.counts()
        assert (counts.waiting, counts.running) == (0, 0)
        assert len(await client.jobs.completed(count=JOBS + 10)) == JOBS + 1


def _listeners(cluster: Cluster, channel: str) -> int:
    """Subscribers to `channel` on every node (an idle worker listens for put events)."""
    total = 0
    for port in cluster.ports:
        reply = ask(port, "PUBSUB", "NUMSUB", channel)
        assert isinstance(reply, list)
        total += int(reply[1])
    return total


async def until_completed(events: EventStream, jid: str) -> AsyncIterator[Event]:
    async for event in events:
        yield event
        if event.kind == "completed" and event.jid == jid:
            return


async def _length(client: aqless.Client, key: str, count: int) -> bool:
    return int(await client.redis.llen(key)) >= count


async def test_any_node_hears_every_deployments_events(cluster: Cluster) -> None:
    """The script PUBLISHes, and a Cluster forwards that to every node: a stream on a node
    that holds neither deployment hears both."""
    (elsewhere,) = set(cluster.ports) - {home(cluster, ns) for ns in DEPLOYMENTS}
    listener = aioredis.Redis(port=elsewhere, decode_responses=True)
    try:
        async with aqless.Client.from_cluster(addresses(cluster), namespace="{a}") as client:
            stream = EventStream(listener, prefix=client.prefix, channels=("log",))
            async with stream:
                jid = await client.queues["heard"].put("app.Work", {})
                with anyio.fail_after(5):
                    # the bus may still carry the last test's events to this node
                    event = await anext(e async for e in stream if e.jid == jid)
            assert (event.kind, event.queue) == ("put", "heard")
    finally:
        await listener.aclose()


@pytest.mark.parametrize("namespace", ["billing", "{}billing", "bill{ing", "bill}{"])
async def test_a_namespace_without_a_hash_tag_is_refused(cluster: Cluster, namespace: str) -> None:
    with pytest.raises(aqless.ConfigurationError, match="hash tag"):
        aqless.Client.from_cluster(addresses(cluster), namespace=namespace)
    made = RedisCluster(host="127.0.0.1", port=cluster.ports[0], decode_responses=True)
    try:
        with pytest.raises(aqless.ConfigurationError, match="hash tag"):
            aqless.Client(redis=made, namespace=namespace)
        with pytest.raises(aqless.ConfigurationError, match="hash tag"):
            aqless.Client(redis=made)  # the plain ql: keys are spread over every slot
    finally:
        await made.aclose()


async def test_a_cluster_client_of_ones_own_works_with_a_hash_tag(cluster: Cluster) -> None:
    made = RedisCluster(host="127.0.0.1", port=cluster.ports[1], decode_responses=True)
    try:
        async with aqless.Client(redis=made, namespace="app{billing}") as client:
            jid = await client.queues["q"].put("app.Work", {})
            job = await client.queues["q"].pop()
            assert job is not None
            assert job.jid == jid
            await job.complete()
    finally:
        await made.aclose()  # not the client's: it closes only what it made
    port = cluster.port_for_slot(key_slot(b"billing"))
    assert ask(port, "HGET", f"app{{billing}}:ql:j:{jid}", "state") == "complete"


async def test_a_cluster_is_found_from_the_url_of_one_node(cluster: Cluster) -> None:
    url = f"redis://127.0.0.1:{cluster.ports[2]}/0"
    async with aqless.Client.from_cluster(url, namespace="{url}") as client:
        jid = await client.queues["q"].put("app.Work", {})
        assert await client.queues["q"].length() == 1
    port = cluster.port_for_slot(key_slot(b"url"))
    assert ask(port, "HGET", f"{{url}}:ql:j:{jid}", "state") == "waiting"


def test_hash_tags_are_read_as_the_cluster_reads_them() -> None:
    assert hash_tag("{billing}") == "billing"
    assert hash_tag("app{billing}x") == "billing"
    assert hash_tag("}{x}{y}") == "x"
    for untagged in ("billing", "{}billing", "{billing", "billing}", ""):
        assert hash_tag(untagged) is None


async def test_a_cluster_client_calls_over_the_lean_connection_and_is_pushed_jobs(
    cluster: Cluster,
) -> None:
    async with aqless.Client.from_cluster(addresses(cluster), namespace="{lean}") as client:
        await assert_script_calls_go_lean(client, "cluster")
        assert client.protocol.wire.endpoint.address == ("127.0.0.1", home(cluster, "{lean}"))
        await assert_a_worker_is_pushed_its_job(client)
    url = "redis+cluster://" + ",".join(f"127.0.0.1:{port}" for port in cluster.ports[1:])
    async with aqless.Client(url, namespace="{url-lean}", worker_name="by-url") as client:
        await assert_script_calls_go_lean(client, "cluster")
        home_port = home(cluster, "{url-lean}")
        assert client.protocol.wire.endpoint.address == ("127.0.0.1", home_port)
        await assert_a_worker_is_pushed_its_job(client)
    with pytest.raises(aqless.ConfigurationError, match="hash tag"):
        aqless.Client(url)


async def test_a_moved_slot_is_followed_and_the_moved_call_sent_once_more(
    cluster: Cluster,
) -> None:
    namespace = "{moving}"
    slot = key_slot(f"{namespace}:ql:".encode())
    source = home(cluster, namespace)
    target = next(port for port in cluster.ports if port != source)
    async with aqless.Client.from_cluster(addresses(cluster), namespace=namespace) as client:
        first = await client.queues["q"].put("app.Work", {})
        assert client.protocol.wire.endpoint.address == ("127.0.0.1", source)
        move_slot(cluster, slot, source, target)
        try:
            second = await client.queues["q"].put("app.Work", {})  # MOVED, then sent again
            assert client.protocol.wire.endpoint.address == ("127.0.0.1", target)
            assert [job.jid for job in await client.jobs.get_many([first, second])] == [
                first,
                second,
            ]
            assert await client.queues["q"].length() == 2  # the put ran once
        finally:
            move_slot(cluster, slot, target, source)
