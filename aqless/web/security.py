"""Who may see and act (the host's `auth` hook), proof that a form came from the dashboard
(CSRF, and the request's origin), and the response headers that keep pages inert
(Content-Security-Policy)."""

from __future__ import annotations

import hashlib
import hmac
import inspect
import secrets
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Final, Literal
from urllib.parse import urlsplit

from starlette.datastructures import MutableHeaders
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from aqless.errors import ConfigurationError

Permission = Literal["view", "act"]
#: ``auth(request, "view" | "act")`` answers whether this request may see pages, or act.
AuthCheck = Callable[[Request, Permission], bool | Awaitable[bool]]
#: What `create_app(auth=...)` takes: a check, or Starlette middleware wrapped around the app.
Auth = AuthCheck | Middleware | Sequence[Middleware] | None

CSRF_COOKIE = "aqless_csrf"
CSRF_FIELD = "csrf"
CSRF_HEADER = "x-aqless-csrf"

# No inline script or style anywhere: job data can only ever be text.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
_HEADERS = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "x-frame-options": "DENY",
}


async def allowed(check: AuthCheck | None, request: Request, permission: Permission) -> bool:
    if check is None:
        return True
    verdict = check(request, permission)
    if inspect.isawaitable(verdict):
        verdict = await verdict
    return bool(verdict)


class Csrf:
    """Double-submit tokens bound to a secret: the cookie holds a random nonce, forms carry
    HMAC(secret, nonce). A cookie planted by someone else is useless without the secret."""

    def __init__(self, secret: bytes) -> None:
        self._secret = secret

    def nonce(self, request: Request) -> tuple[str, bool]:
        """The browser's nonce, or a new one (True: it must be set as a cookie)."""
        nonce = request.cookies.get(CSRF_COOKIE)
        if nonce and len(nonce) <= 64:
            return nonce, False
        return secrets.token_urlsafe(24), True

    def token(self, nonce: str) -> str:
        return hmac.new(self._secret, nonce.encode(), hashlib.sha256).hexdigest()

    def valid(self, request: Request, submitted: str | None) -> bool:
        nonce = request.cookies.get(CSRF_COOKIE)
        if not nonce or not submitted:
            return False
        return hmac.compare_digest(self.token(nonce), submitted)

    @staticmethod
    def set_cookie(response: Response, request: Request, nonce: str) -> None:
        set_private_cookie(response, request, CSRF_COOKIE, nonce)


def set_private_cookie(
    response: Response, request: Request, name: str, value: str, max_age: int | None = None
) -> None:
    """A cookie only this dashboard's pages get and no script reads (for `max_age` seconds,
    or the browser's session)."""
    response.set_cookie(
        name,
        value,
        max_age=max_age,
        path=root_path(request) or "/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )


_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


def origin(url: str) -> str | None:
    """``scheme://host[:port]`` of `url`, lowercased and without a default port; None for
    anything that names no origin (``null``, a path, garbage)."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    if scheme not in _DEFAULT_PORTS or not host:
        return None
    if ":" in host:  # an IPv6 address keeps its brackets
        host = f"[{host}]"
    return f"{scheme}://{host}" + ("" if port in (None, _DEFAULT_PORTS[scheme]) else f":{port}")


class Origins:
    """Where a state-changing request may come from: the dashboard's own origin (the scheme
    and ``Host`` the request reached it with) and the `trusted` ones, for a proxy in front
    that changes the scheme or the host (``https://ops.example.com``).

    A browser names the page a POST came from in ``Origin`` (else ``Referer``); a request
    naming neither is not a browser's form, and its CSRF token alone decides."""

    def __init__(self, trusted: Iterable[str] = ()) -> None:
        found: set[str] = set()
        for given in trusted:
            checked = origin(given)
            if checked is None or urlsplit(given.strip()).path not in ("", "/"):
                raise ConfigurationError(
                    "a trusted origin is scheme://host[:port] (http or https, no path): "
                    f"got {given!r}"
                )
            found.add(checked)
        self.trusted = frozenset(found)

    def refusal(self, request: Request) -> str | None:
        """Why `request` is refused (it came from another site), or None."""
        header, sent = "Origin", request.headers.get("origin")
        if sent is None:
            header, sent = "Referer", request.headers.get("referer")
        if sent is None:
            return None
        found = origin(sent)
        if found is not None and (found == origin(str(request.base_url)) or found in self.trusted):
            return None
        shown = sent if len(sent) <= 100 else sent[:99] + "…"
        return f"The request came from another site ({header} {shown}), not from this dashboard."


def root_path(request: Request) -> str:
    """Where the dashboard is mounted ('' at the root of a server)."""
    return str(request.scope.get("root_path", "")).rstrip("/")


def safe_next(request: Request, target: str | None) -> str:
    """`target` if it is a page of this dashboard, else the overview: never an open redirect."""
    home = root_path(request) + "/"
    if not target or not target.startswith(home) or target.startswith("//") or "\\" in target:
        return home
    return target


class SecurityHeaders:
    """Adds the CSP and its companions to every response the dashboard sends."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in _HEADERS.items():
                    if name not in headers:
                        headers[name] = value
            await send(message)

        await self.app(scope, receive, send_with_headers)
