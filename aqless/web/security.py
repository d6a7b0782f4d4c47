"""Who may see and act (the host's `auth` hook), proof that a form came from the dashboard
(CSRF), and the response headers that keep pages inert (Content-Security-Policy)."""

from __future__ import annotations

import hashlib
import hmac
import inspect
import secrets
from collections.abc import Awaitable, Callable, Sequence
from typing import Literal

from starlette.datastructures import MutableHeaders
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

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
        response.set_cookie(
            CSRF_COOKIE,
            nonce,
            path=root_path(request) or "/",
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
        )


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
