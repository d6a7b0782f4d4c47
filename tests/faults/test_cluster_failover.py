"""A plain Client on a Cluster with a replica per primary: its event stream, on a
connection to the primary holding its namespace's slot, follows a failover of that
primary (its replica promoted with CLUSTER FAILOVER TAKEOVER): the slot map is read
again at each reconnection, so the stream resubscribes on the promoted node."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import pytest
from redis.crc import key_slot

import aqless
from tests.faults.cluster import Cluster, heard_after_failover, valkey_cluster
from tests.faults.harness import ask

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
