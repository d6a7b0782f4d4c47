"""A plain Client on a Cluster with a replica per primary: its event stream, on a
connection to the primary holding its namespace's slot, and a Worker's put-event
listener follow a failover of that primary (its replica promoted with CLUSTER FAILOVER
TAKEOVER): the slot map is read again at each reconnection, so they resubscribe on the
promoted node."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import pytest
from redis.crc import key_slot

import aqless
from tests.faults.cluster import Cluster, heard_after_failover, is_primary, valkey_cluster
from tests.faults.harness import ask
from tests.support.worker_processes import eventually

pytestmark = [pytest.mark.faults, pytest.mark.timeout(120)]

NAMESPACE = "{plain-failover}"


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with valkey_cluster(replicas=True) as running:
        yield running


async def put_until_served(client: aqless.Client) -> str:
    """A put, tried again while the client's connection finds the promoted node."""
    for attempt in range(100):
        try:
            return await client.queues["q"].put("app.Work", {}, jid=f"after-{attempt}")
        except aqless.ConnectionLostError:
            await anyio.sleep(0.1)
    raise AssertionError("no put reached the promoted primary")


async def test_a_plain_clients_event_stream_follows_a_failover(cluster: Cluster) -> None:
    victim = cluster.port_for_slot(key_slot(f"{NAMESPACE}:ql:".encode()))
    channel = f"{NAMESPACE}:ql:log"
    nodes = [("127.0.0.1", port) for port in cluster.ports]
    async with (
        aqless.Client.from_cluster(nodes, namespace=NAMESPACE) as client,
        client.events("log") as events,
    ):
        assert ask(victim, "PUBSUB", "NUMSUB", channel) == [channel, 1]  # it listens there
        event = await heard_after_failover(
            cluster, victim, events, lambda: put_until_served(client)
        )
    assert event.channel == channel


def namespace_away_from(cluster: Cluster, port: int) -> str:
    """A hash-tagged namespace whose slot is held by another primary than `port`'s."""
    return next(
        namespace
        for namespace in (f"{{worker-{n}}}" for n in range(1000))
        if cluster.port_for_slot(key_slot(f"{namespace}:ql:".encode())) != port
    )


async def test_a_plain_workers_put_events_follow_a_failover(cluster: Cluster) -> None:
    """A worker polling once a minute (`max_jobs`: it listens to put events, no pushes)
    takes a job put after its primary failed over: its put-event listener resubscribed
    on the promoted node and its ``'reconnected'`` event sent it to pop."""
    taken = cluster.port_for_slot(key_slot(f"{NAMESPACE}:ql:".encode()))
    namespace = namespace_away_from(cluster, taken)  # the first test's primary is gone
    victim = cluster.port_for_slot(key_slot(f"{namespace}:ql:".encode()))
    promoted = cluster.replicas[victim]
    nodes = [("127.0.0.1", port) for port in cluster.ports if port != taken]
    done: list[str] = []
    handlers = aqless.Handlers()

    @handlers.register("app.Work")
    async def work(job: aqless.Job) -> None:
        done.append(job.jid)

    async with (
        aqless.Client.from_cluster(nodes, namespace=namespace) as client,
        aqless.Client.from_cluster(nodes, namespace=namespace) as putter,
    ):
        worker = aqless.Worker(client, ["q"], handlers=handlers, interval=60, max_jobs=2)
        async with anyio.create_task_group() as running:
            running.start_soon(worker.run)
            with anyio.fail_after(60):
                first = await putter.queues["q"].put("app.Work", {})
                await eventually(lambda: done == [first], what="the first job run")
                await eventually(lambda: worker.listening, what="the worker listening")
                cluster.kill(victim)
                ask(promoted, "CLUSTER", "FAILOVER", "TAKEOVER")
                await eventually(lambda: is_primary(promoted), what="the replica promoted")
                second = await put_until_served(putter)
                await eventually(lambda: done == [first, second], what="the second job run")
            worker.stop()
