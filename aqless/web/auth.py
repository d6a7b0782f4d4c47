"""The dashboard's own authentication: named users with a secret and a role, checked on
every request by HTTP basic auth (name and secret) or a bearer token (the secret alone).

A user is written ``NAME:SECRET[:ROLE]``; ROLE is ``admin`` (the default: sees and acts)
or ``read-only`` (sees everything, changes nothing). Secrets are compared in constant time
(as SHA-256 digests, against every user, so neither a name nor a length shows in timing).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from aqless.errors import ConfigurationError

Role = Literal["admin", "read-only"]
ROLES: Final[tuple[Role, ...]] = ("admin", "read-only")
REALM: Final = "aqless dashboard"
#: Where the authenticated `User` is kept in the ASGI scope.
SCOPE_KEY: Final = "aqless.user"


@dataclass(frozen=True, slots=True)
class User:
    """Someone who may use the dashboard: `name` (shown in the audit log), `role`."""

    name: str
    role: Role

    @property
    def may_act(self) -> bool:
        return self.role == "admin"


@dataclass(frozen=True, slots=True, repr=False)
class Credential:
    user: User
    digest: bytes  # SHA-256 of the secret

    def __repr__(self) -> str:  # never the secret, nor its digest
        return f"Credential({self.user.name!r}, {self.user.role!r})"


def _digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode()).digest()


def parse_user(text: str) -> Credential:
    """``NAME:SECRET[:ROLE]`` as a credential; ConfigurationError for anything else."""
    name, colon, rest = text.strip().partition(":")
    role: Role = "admin"
    for candidate in ROLES:
        if rest.endswith(":" + candidate):
            rest, role = rest[: -len(candidate) - 1], candidate
            break
    if not colon or not name or not rest:
        raise ConfigurationError(
            "a dashboard user is NAME:SECRET or NAME:SECRET:ROLE (ROLE admin or read-only), "
            f"with a name and a secret: got {_masked(text)!r}"
        )
    return Credential(User(name, role), _digest(rest))


def _masked(text: str) -> str:
    name, colon, _ = text.strip().partition(":")
    return f"{name}:…" if colon else name[:20]


def read_users(path: str | Path) -> list[Credential]:
    """The users of a file: one ``NAME:SECRET[:ROLE]`` a line; blank lines and lines
    starting with ``#`` are skipped."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise ConfigurationError(f"cannot read the users file {str(path)!r}: {error}") from None
    return [
        parse_user(line) for line in lines if line.strip() and not line.lstrip().startswith("#")
    ]


class Users:
    """The credentials the dashboard accepts."""

    def __init__(self, credentials: Iterable[Credential | str]) -> None:
        found = [parse_user(c) if isinstance(c, str) else c for c in credentials]
        names = [credential.user.name for credential in found]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ConfigurationError(f"dashboard users given twice: {', '.join(twice)}")
        if not found:
            raise ConfigurationError("no dashboard user given")
        digests = [credential.digest for credential in found]
        if len(set(digests)) < len(digests):
            raise ConfigurationError(
                "two dashboard users have the same secret: a bearer token could not tell them apart"
            )
        self._credentials: Sequence[Credential] = tuple(found)

    def __len__(self) -> int:
        return len(self._credentials)

    def _match(self, name: str | None, secret: str) -> User | None:
        """The user whose name (when given) and secret match: every credential is compared,
        the name and the secret both, whatever matched before."""
        offered = _digest(secret)
        name_digest = _digest(name) if name is not None else b""
        found: User | None = None
        for credential in self._credentials:
            same_secret = hmac.compare_digest(credential.digest, offered)
            same_name = name is None or hmac.compare_digest(
                _digest(credential.user.name), name_digest
            )
            if same_secret and same_name:
                found = credential.user
        return found

    def authenticate(self, headers: Headers) -> User | None:
        """The user an ``Authorization`` header proves, else None."""
        scheme, _, value = headers.get("authorization", "").strip().partition(" ")
        value = value.strip()
        if scheme.lower() == "bearer" and value:
            return self._match(None, value)
        if scheme.lower() == "basic" and value:
            try:
                decoded = base64.b64decode(value, validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                return None
            name, colon, secret = decoded.partition(":")
            return self._match(name, secret) if colon else None
        return None


class RequireUser:
    """ASGI middleware: a request without a valid credential gets 401 and the challenge;
    with one, its `User` is in ``scope["aqless.user"]``."""

    def __init__(self, app: ASGIApp, users: Users) -> None:
        self.app = app
        self.users = users

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        user = self.users.authenticate(Headers(scope=scope))
        if user is None:
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"www-authenticate", f'Basic realm="{REALM}", charset="UTF-8"'.encode()),
                        (b"www-authenticate", f'Bearer realm="{REALM}"'.encode()),
                        (b"content-type", b"text/plain; charset=utf-8"),
                        (b"cache-control", b"no-store"),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": b"Authentication required.\n"})
            return
        scope[SCOPE_KEY] = user
        await self.app(scope, receive, send)


def user_of(request: Request) -> User | None:
    found = request.scope.get(SCOPE_KEY)
    return found if isinstance(found, User) else None


def who(request: Request) -> str:
    """The name of whoever sent `request`, for the audit log: the dashboard's user, else
    the host application's authenticated user, else ``anonymous (<address>)``."""
    own = user_of(request)
    if own is not None:
        return own.name
    host_user = request.scope.get("user")
    if host_user is not None and getattr(host_user, "is_authenticated", False):
        return str(getattr(host_user, "display_name", "") or host_user)
    address = request.client.host if request.client else "unknown"
    return f"anonymous ({address})"
