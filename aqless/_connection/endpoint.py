"""Where the lean connections go, and how they get in: one ``Endpoint`` per client.

An Endpoint is made from the redis-py client a Client holds (whatever it was made from: a
URL and options, ``redis=``, Sentinel or a Cluster), reading only its public attributes: the
pool's ``connection_class`` and ``connection_kwargs``, a Sentinel pool's
``get_master_address()``, a Cluster's slot map. It holds

- an address resolver: a fixed host and port or socket path; the primary Sentinel names now,
  asked again at every (re)connection; the node holding the deployment's slot on a Cluster;
- a TLS context (``ssl_*`` options, with or without a client certificate), or none;
- the greeting: user name and password (or a credential provider's, via its public
  ``get_credentials_async``), database number, client name;
- the timeouts and keep-alive of the socket.

An option the lean connection would not honour (RESP3, a custom connection class, an
unknown truthy keyword...) is a ConfigurationError naming it, never silently dropped. Options
that only steer redis-py's own machinery (its retries, health checks, library name,
maintenance notifications, read buffer size) are ignored: see ``REDIS_PY_ONLY``.

**Following the primary.** A reply that says the connection is not the right one any more
retires it, and the next connection resolves the address again: ``READONLY`` and
``MASTERDOWN`` (a demoted Sentinel primary), ``MOVED``, ``ASK``, ``CLUSTERDOWN`` and
``TRYAGAIN`` (a Cluster that moved or is moving the slot). A dropped connection is replaced
likewise. A ``MOVED`` reply means the server did not run the call, and names the node that
holds the slot now: the lean connection sends that call once more, there. Every other
refusal reaches the caller as ServerUnavailableError (nothing ran) for its layer to decide.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import Connection, SSLConnection, UnixDomainSocketConnection
from redis.asyncio.sentinel import SentinelConnectionPool
from redis.exceptions import ConnectionError as RedisConnectionError

from aqless.errors import ConfigurationError

__all__ = ["REDIS_PY_ONLY", "Address", "Endpoint"]

#: A server's (host, port), or the path of its Unix socket.
Address = tuple[str, int] | str

#: Connection options that only steer redis-py's own machinery, ignored by the lean connection.
REDIS_PY_ONLY = frozenset(
    {
        "retry", "retry_on_timeout", "retry_on_error", "health_check_interval",
        "lib_name", "lib_version", "driver_info", "socket_read_size", "legacy_responses",
        "event_dispatcher", "himport_registry", "maint_notifications_config",
        "maint_notifications_pool_handler", "oss_cluster_maint_notifications_handler",
        "orig_host_address", "orig_socket_timeout", "orig_socket_connect_timeout",
        "connection_pool",  # a Sentinel pool's link back to itself
    }
)  # fmt: skip
_HONOURED = frozenset(
    {
        "host", "port", "path", "db", "username", "password", "credential_provider",
        "client_name", "socket_timeout", "socket_connect_timeout", "socket_keepalive",
        "socket_keepalive_options", "decode_responses", "encoding", "encoding_errors",
        "protocol", "ssl_keyfile", "ssl_certfile", "ssl_password", "ssl_cert_reqs",
        "ssl_ca_certs", "ssl_ca_data", "ssl_ca_path", "ssl_check_hostname", "ssl_min_version",
        "ssl_ciphers", "ssl_include_verify_flags", "ssl_exclude_verify_flags",
    }
)  # fmt: skip
#: Seconds a connection may take to open (and to be greeted) unless the options say.
CONNECT_TIMEOUT = 5.0
#: Seconds a lean connection may be silent while a call waits, unless ``socket_timeout``
#: says (no script of aqless runs near this long; the server's own busy limit is 5 s).
REPLY_TIMEOUT = 10.0
_CLASSES = (Connection, UnixDomainSocketConnection, SSLConnection)
_CERT_REQS = {"none": ssl.CERT_NONE, "optional": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}
# the error codes that say this connection is no longer the one to use
_FOLLOW = {
    "sentinel": ("READONLY", "MASTERDOWN"),
    "cluster": ("MOVED", "ASK", "CLUSTERDOWN", "TRYAGAIN"),
}

Stream = TypeVar("Stream", bound=asyncio.Protocol)


def _checked(options: Mapping[str, Any]) -> dict[str, Any]:
    """The options the lean connection honours, or ConfigurationError for the first it
    cannot (ignoring redis-py's own and those left unset)."""
    kept = {}
    for name, value in options.items():
        if name in _HONOURED:
            kept[name] = value
        elif name not in REDIS_PY_ONLY and value:
            raise ConfigurationError(
                f"the connection option {name}={value!r} is not supported by aqless's "
                "connection (see aqless._connection.endpoint)"
            )
    if kept.get("protocol") not in (None, 2, "2"):
        raise ConfigurationError("aqless speaks RESP2: protocol=3 is not supported")
    return kept


def _tls(options: Mapping[str, Any]) -> ssl.SSLContext:
    """The TLS context of redis-py's ``ssl_*`` options, made as redis-py makes it."""
    reqs = options.get("ssl_cert_reqs", "required")
    if isinstance(reqs, str):
        if reqs not in _CERT_REQS:
            raise ConfigurationError(f"ssl_cert_reqs is none, optional or required, not {reqs!r}")
        reqs = _CERT_REQS[reqs]
    context = ssl.create_default_context()
    context.check_hostname = bool(options.get("ssl_check_hostname", True)) and (
        reqs != ssl.CERT_NONE
    )
    context.verify_mode = reqs
    for flag in options.get("ssl_include_verify_flags") or ():
        context.verify_flags |= flag
    for flag in options.get("ssl_exclude_verify_flags") or ():
        context.verify_flags &= ~flag
    try:
        if options.get("ssl_certfile") or options.get("ssl_keyfile"):
            context.load_cert_chain(
                options.get("ssl_certfile") or options["ssl_keyfile"],
                options.get("ssl_keyfile"),
                options.get("ssl_password"),
            )
        if options.get("ssl_ca_certs") or options.get("ssl_ca_data") or options.get("ssl_ca_path"):
            context.load_verify_locations(
                options.get("ssl_ca_certs"), options.get("ssl_ca_path"), options.get("ssl_ca_data")
            )
    except (OSError, ssl.SSLError) as error:
        raise ConfigurationError(f"cannot read the TLS certificates: {error}") from error
    if options.get("ssl_min_version") is not None:
        context.minimum_version = options["ssl_min_version"]
    if options.get("ssl_ciphers") is not None:
        context.set_ciphers(options["ssl_ciphers"])
    return context


class _ClusterNode:
    """Resolves the node holding `key`'s slot from the Cluster client's slot map: read again
    at every connection after the first, or taken from the ``MOVED`` reply that named it."""

    def __init__(self, cluster: RedisCluster, key: str) -> None:
        self._cluster = cluster
        self._key = key
        self._read = False
        self.moved_to: tuple[str, int] | None = None

    async def __call__(self) -> Address:
        if self.moved_to is not None:
            address, self.moved_to = self.moved_to, None
            return address
        if self._read:
            await self._cluster.nodes_manager.initialize()  # the map may be stale
        else:
            await self._cluster.initialize()
        self._read = True
        node = self._cluster.get_node_from_key(self._key)
        if node is None:
            raise RedisConnectionError(f"no Cluster node holds the slot of {self._key}")
        return node.host, int(node.port)


@dataclass
class Endpoint:
    """How to reach and greet the server a client's lean connections go to."""

    kind: str  # "tcp", "unix", "tls", "sentinel" or "cluster"
    resolve: Callable[[], Awaitable[Address]]
    options: dict[str, Any]
    tls: ssl.SSLContext | None = None
    cluster_node: _ClusterNode | None = None
    address: Address | None = None  # where the last connection went

    @classmethod
    def of(cls, redis: Redis | RedisCluster, prefix: str) -> Endpoint:
        """The endpoint of the server `redis` talks to (on a Cluster: the node holding
        `prefix`'s slot); ConfigurationError for options it cannot honour."""
        if isinstance(redis, RedisCluster):
            node = next(iter(redis.nodes_manager.startup_nodes.values()))
            options = _checked_class(node.connection_class, node.connection_kwargs)
            resolver = _ClusterNode(redis, prefix)
            tls = _tls(options) if issubclass(node.connection_class, SSLConnection) else None
            return cls("cluster", resolver, options, tls, resolver)
        pool = redis.connection_pool
        options = _checked_class(pool.connection_class, pool.connection_kwargs)
        tls = _tls(options) if issubclass(pool.connection_class, SSLConnection) else None
        if isinstance(pool, SentinelConnectionPool):
            return cls("sentinel", pool.get_master_address, options, tls)
        address: Address = (
            options["path"]
            if issubclass(pool.connection_class, UnixDomainSocketConnection)
            else (options.get("host", "localhost"), int(options.get("port", 6379)))
        )

        async def fixed() -> Address:
            return address

        kind = "unix" if isinstance(address, str) else "tls" if tls else "tcp"
        return cls(kind, fixed, options, tls)

    def follows(self) -> tuple[str, ...]:
        """The error codes after which a connection must be given up for a new one."""
        return _FOLLOW.get(self.kind, ())

    def moved(self, text: str) -> bool:
        """Take note of a ``MOVED <slot> <host>:<port>`` reply: True when the call may be
        sent once more, to the node named."""
        code, _, rest = text.partition(" ")
        if code != "MOVED" or self.cluster_node is None:
            return False
        host, _, port = rest.rpartition(" ")[2].rpartition(":")
        self.cluster_node.moved_to = (host or self._host(), int(port))
        return True

    def _host(self) -> str:
        return self.address[0] if isinstance(self.address, tuple) else "localhost"

    @property
    def connect_timeout(self) -> float:
        """Seconds a new connection may take to open, and again to be greeted: the
        ``socket_connect_timeout`` option, else ``socket_timeout``, else CONNECT_TIMEOUT (a
        server cut off by the network never answers a connect: it must not wait for ever)."""
        options = self.options
        given = options.get("socket_connect_timeout") or options.get("socket_timeout")
        return float(given) if given else CONNECT_TIMEOUT

    @property
    def reply_timeout(self) -> float:
        """Seconds a connection may say nothing while a call waits before it is dropped (its
        calls failing with ConnectionLostError, perhaps run): the ``socket_timeout`` option,
        else REPLY_TIMEOUT. A partition leaves a sent call unanswered, and the server's
        kernel never resets the connection: without this it would wait for ever."""
        given = self.options.get("socket_timeout")
        return float(given) if given else REPLY_TIMEOUT

    async def open(self, make: Callable[[], Stream]) -> Stream:
        """A new connection made by `make` to the address resolved now (not greeted)."""
        timeout = self.connect_timeout
        loop = asyncio.get_running_loop()
        address: Address | None = None
        try:
            async with asyncio.timeout(timeout):
                address = await self.resolve()
                if isinstance(address, str):
                    transport, opened = await loop.create_unix_connection(make, address)
                else:
                    transport, opened = await loop.create_connection(
                        make, address[0], address[1], ssl=self.tls
                    )
        except (OSError, TimeoutError, ssl.SSLError) as error:
            why = str(error) or f"no answer within {timeout:g} s"  # a timeout says nothing
            raise RedisConnectionError(
                f"cannot connect to {_named(address, self.kind)}: {why}"
            ) from error
        self.address = address
        self._keep_alive(transport)
        return opened

    def _keep_alive(self, transport: asyncio.BaseTransport) -> None:
        sock = transport.get_extra_info("socket")
        if (
            sock is None
            or sock.family == socket.AF_UNIX
            or not self.options.get("socket_keepalive")
        ):
            return
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        extra = self.options.get("socket_keepalive_options")
        if isinstance(extra, Mapping):
            for option, value in extra.items():
                sock.setsockopt(socket.IPPROTO_TCP, option, value)

    async def greeting(self) -> list[tuple[str | int, ...]]:
        """The commands that authenticate, select the database and name a new connection."""
        hello: list[tuple[str | int, ...]] = []
        options = self.options
        user, password = options.get("username"), options.get("password")
        provider = options.get("credential_provider")
        if provider is not None:
            credentials = await provider.get_credentials_async()
            user, password = (None, *credentials) if len(credentials) == 1 else credentials
        if password is not None:
            hello.append(("AUTH", user, password) if user else ("AUTH", password))
        if options.get("client_name"):
            hello.append(("CLIENT", "SETNAME", options["client_name"]))
        if options.get("db"):
            hello.append(("SELECT", options["db"]))
        return hello


def _checked_class(kind: type[Any], options: Mapping[str, Any]) -> dict[str, Any]:
    if not issubclass(kind, _CLASSES):
        raise ConfigurationError(
            f"connection_class {kind.__name__} is not supported by aqless's connection: "
            "use redis-py's Connection, UnixDomainSocketConnection or SSLConnection"
        )
    return _checked(options)


def _named(address: Address | None, kind: str) -> str:
    """An address as people write it: ``host:port`` (``[v6]:port``) or a socket's path."""
    if address is None:
        return kind
    if isinstance(address, str):
        return address
    host, port = address
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
