"""URLs that name several servers: ``redis+sentinel://`` and ``redis+cluster://``.

``redis+sentinel://[user:password@]host:port[,host:port...]/service`` names the Sentinels
that watch `service` (port 26379 by default); the user and password are the primary's.
``redis+cluster://[user:password@]host:port[,host:port...]`` names some nodes of a Cluster
(port 6379 by default). So a Client, ``aqless-run``, the CLI and the dashboard reach every
kind of deployment from a URL alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote

from aqless.errors import ConfigurationError

__all__ = ["CLUSTER", "SENTINEL", "ManyHosts", "parse"]

SENTINEL = "redis+sentinel"
CLUSTER = "redis+cluster"
_DEFAULT_PORTS = {SENTINEL: 26379, CLUSTER: 6379}


@dataclass(frozen=True)
class ManyHosts:
    """What a URL of several servers says."""

    scheme: str
    hosts: list[tuple[str, int]]
    username: str | None
    password: str | None
    path: str  # the Sentinel service's name; empty for a Cluster


def scheme_of(url: str) -> str:
    return url.partition("://")[0].lower()


def parse(url: str) -> ManyHosts:
    """The hosts, credentials and path of a ``redis+sentinel://`` or ``redis+cluster://``
    URL; ConfigurationError for a malformed one."""
    scheme, _, rest = url.partition("://")
    scheme = scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise ConfigurationError(f"not a {SENTINEL}:// or {CLUSTER}:// URL: {url!r}")
    location, _, path = rest.partition("/")
    path = unquote(path.partition("?")[0])
    credentials, _, servers = location.rpartition("@")
    user, _, password = credentials.partition(":")
    hosts = [_host_port(part, _DEFAULT_PORTS[scheme], url) for part in servers.split(",")]
    if scheme == SENTINEL and not path:
        raise ConfigurationError(f"a {SENTINEL}:// URL ends with /<service name>: {url!r}")
    if scheme == CLUSTER and path:
        raise ConfigurationError(f"a {CLUSTER}:// URL names nodes only: {url!r}")
    return ManyHosts(
        scheme,
        hosts,
        unquote(user) or None,
        unquote(password) if credentials and ":" in credentials else None,
        path,
    )


def _host_port(part: str, default: int, url: str) -> tuple[str, int]:
    if part.startswith("["):  # an IPv6 address
        host, _, port = part[1:].partition("]")
        port = port.removeprefix(":")
    else:
        host, _, port = part.partition(":")
    if not host:
        raise ConfigurationError(f"a host is missing in {url!r}")
    if not port:
        return host, default
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigurationError(f"not a port: {port!r} in {url!r}")
    return host, int(port)
