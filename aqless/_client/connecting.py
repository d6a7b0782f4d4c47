"""How a Client reaches its server: the URL of a host and port, the worker name a process
goes by, and the redis-py client of a URL (a pool, Sentinel's primary, a Cluster)."""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from aqless._connection import cluster as _cluster
from aqless._connection import urls
from aqless._connection.endpoint import CONNECT_TIMEOUT
from aqless.errors import ConfigurationError
from aqless.scripts.loader import AnyRedis

# what the embedded server's URL looks like, for checking the options before it starts
EMBEDDED_URL_SHAPE = "unix:///embedded/valkey.sock"


def address_url(host: str | None, port: int | None, unix_socket_path: str | None) -> str | None:
    """The URL of ``Client(host=..., port=...)`` or ``Client(unix_socket_path=...)`` (None
    when none is given): ``redis://host:port`` (``localhost:6379`` by default) or
    ``unix://path``; ``db``, ``username``, ``password`` go to the connection as they are."""
    if unix_socket_path is not None:
        if host is not None or port is not None:
            raise ConfigurationError("give host/port or unix_socket_path, not both")
        if not unix_socket_path:
            raise ConfigurationError("unix_socket_path must not be empty")
        return f"unix://{quote(unix_socket_path)}"
    if host is None and port is None:
        return None
    if host is not None and (not host or any(c in host for c in "/@?#")):
        raise ConfigurationError(f"not a host name or address: {host!r}")
    if port is not None and not (type(port) is int and 0 < port < 65536):  # not a bool
        raise ConfigurationError(f"a port is a number from 1 to 65535, got {port!r}")
    name = host or "localhost"
    if ":" in name and not name.startswith("["):  # an IPv6 address
        name = f"[{name}]"
    return f"redis://{name}:{port or 6379}"


def default_worker_name() -> str:
    """`<host>-<pid>`: how the server tells this process's locks from others'."""
    return f"{socket.gethostname()}-{os.getpid()}"


def connect_many(
    url: urls.ManyHosts, namespace: str | None, connection_options: dict[str, Any]
) -> tuple[AnyRedis, list[aioredis.Redis]]:
    """The redis-py client of a ``redis+sentinel://`` or ``redis+cluster://`` URL, and the
    connections to the Sentinels, if any (the caller closes them)."""
    options = dict(connection_options)
    if url.username is not None:
        options["username"] = url.username
    if url.password is not None:
        options["password"] = url.password
    if url.scheme == urls.CLUSTER:
        if _cluster.hash_tag(namespace or "") is None:
            raise ConfigurationError(
                "on a Redis Cluster the namespace must carry a hash tag, such as "
                f"'{{billing}}', so that all of its keys are in one slot; "
                f"got {namespace!r}"
            )
        return _cluster.connect(url.hosts, **options), []
    return sentinel_primary(url.hosts, url.path, {}, options)


def connect(url: str, connection_options: dict[str, Any]) -> aioredis.Redis:
    """The redis-py client of `url`, owning its pool."""
    # No silent resends: a script call resent after a dropped connection may run
    # twice (a second pop takes more jobs). A dropped call raises
    # ConnectionLostError, and the layer that knows what it meant decides.
    redis = aioredis.Redis(
        connection_pool=connection_pool(url, connection_options), retry=Retry(NoBackoff(), 0)
    )
    redis.auto_close_connection_pool = True  # owns the pool: closed with the client
    return redis


def connection_pool(url: str, connection_options: dict[str, Any]) -> aioredis.ConnectionPool:
    """A connection pool for `url` with the client's options; connects nothing."""
    options = dict(connection_options)
    if options.get("socket_connect_timeout") is None and options.get("socket_timeout") is None:
        # a connect the network leaves unanswered fails in seconds, not the kernel's minutes
        options["socket_connect_timeout"] = CONNECT_TIMEOUT
    try:
        if "max_connections" in options:  # a full pool waits rather than failing a call
            pool: aioredis.ConnectionPool = aioredis.BlockingConnectionPool.from_url(
                url, decode_responses=True, **options
            )
        else:  # redis-py's own default (100) fails calls beyond it
            pool = aioredis.ConnectionPool.from_url(
                url, decode_responses=True, max_connections=2**31, **options
            )
    except ValueError as error:
        raise ConfigurationError(f"bad server URL {url!r}: {error}") from error
    try:  # makes a connection object without connecting: rejects unknown options
        pool.connection_class(**pool.connection_kwargs)
    except TypeError as error:
        raise ConfigurationError(f"bad connection option: {error}") from error
    return pool


def sentinel_primary(
    sentinels: Sequence[tuple[str, int]],
    service_name: str,
    sentinel_options: dict[str, Any],
    options: dict[str, Any],
) -> tuple[aioredis.Redis, list[aioredis.Redis]]:
    """A client of the primary Sentinel names for `service_name`, and the connections to
    the Sentinels (the caller closes them)."""
    from redis.asyncio.sentinel import Sentinel

    sentinel = Sentinel(  # type: ignore[no-untyped-call, unused-ignore]
        sentinels, sentinel_kwargs=sentinel_options
    )
    primary = sentinel.master_for(service_name, decode_responses=True, **options)
    return primary, list(sentinel.sentinels)
