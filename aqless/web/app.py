"""`create_app(client)`: the dashboard as a Starlette app, with no module-level state."""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Sequence
from typing import Final

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from aqless.ops import audit
from aqless.sharding.client import AnyClient
from aqless.web import audit_page, batches, classes, reads, render, scaling, search, shards
from aqless.web.auth import RequireUser, Users
from aqless.web.pages import Dashboard, act, api_page, events, html_page
from aqless.web.reads import Loader
from aqless.web.security import Auth, AuthCheck, Csrf, Origins, SecurityHeaders
from aqless.web.throughput import with_throughput

# path, route name, template, loader: each page is also served as JSON at /api<path>
PAGES: Final[Sequence[tuple[str, str, str, Loader]]] = (
    ("/", "overview", "overview.html", reads.overview),
    ("/queues/{name:path}", "queue", "queue.html", with_throughput(reads.queue)),
    ("/jobs/{jid:path}", "job", "job.html", reads.job),
    ("/failed", "failed", "failed.html", reads.failed),
    ("/failed/{group:path}", "failed_group", "failed_group.html", reads.failed_group),
    ("/tracked", "tracked", "tracked.html", reads.tracked),
    ("/tags", "tags", "tags.html", reads.tags),
    ("/workers", "workers", "workers.html", reads.workers),
    ("/workers/{name:path}", "worker", "worker.html", reads.worker),
    ("/recurring", "recurring", "recurring.html", reads.recurring),
    ("/throttles", "throttles", "throttles.html", reads.throttles),
    ("/batches", "batches", "batches.html", batches.batches),
    ("/batches/{bid:path}", "batch", "batch.html", batches.batch),
    ("/config", "config", "config.html", reads.config),
    ("/patterns", "patterns", "patterns.html", reads.patterns),
    ("/about", "about", "about.html", shards.about),
    ("/completed", "completed", "completed.html", reads.completed),
    ("/shards", "shards", "shards.html", shards.shards),
    ("/audit", "audit", "audit.html", audit_page.audit),
    ("/classes", "classes", "classes.html", classes.classes),
)


def routes() -> list[BaseRoute]:
    found: list[BaseRoute] = []
    for path, name, template, load in PAGES:
        found.append(Route(path, html_page(template, load), name=name))
        api_path = "/api/overview" if path == "/" else "/api" + path
        found.append(Route(api_path, api_page(load), name=f"api_{name}"))
    found += [
        Route("/search", search.page, name="search"),
        Route("/api/search", api_page(search.load), name="api_search"),
        Route("/api/search/names", search.names, name="api_search_names"),
        Route("/api/search/progress", search.progress, name="api_search_progress"),
        Route("/events", events, name="events"),
        Route("/api/scaling", scaling.endpoint, name="api_scaling"),
        Route("/actions/{verb}", act, methods=["POST"], name="act"),
        Mount("/static", StaticFiles(packages=[("aqless.web", "static")]), name="static"),
    ]
    return found


def create_app(
    client: AnyClient,
    *,
    read_only: bool = False,
    auth: Auth = None,
    secret: str | bytes | None = None,
    live_interval: float = 1.0,
    users: Users | None = None,
    audit_length: int = audit.DEFAULT_LENGTH,
    trusted_origins: Iterable[str] = (),
) -> Starlette:
    """The dashboard of the deployment `client` talks to, as an ASGI app.

    Serve it alone (``aqless web``) or mount it: ``app.mount("/aqless",
    create_app(client))`` in FastAPI or Starlette. The client must be open while the app
    serves; the app never closes it.

    Args:
        client: an open client.
        read_only: show everything, offer no action, refuse every POST (default False).
        auth: who may see and act. Either a check ``auth(request, "view" | "act") -> bool``
            (or an awaitable bool), called for every page and every action, or Starlette
            ``Middleware`` (one or a sequence) wrapped around the dashboard, e.g. an
            authentication middleware of the host application.
        secret: the key CSRF tokens are signed with; give the same one to every process
            serving the dashboard behind one address (default: random per app).
        live_interval: at most one live update per this many seconds on each open page
            (default 1.0).
        users: the dashboard's own authentication: only these users (HTTP basic auth or a
            bearer token, see `aqless.web.auth`) get in; a ``read-only`` user changes nothing.
        audit_length: how many entries the audit log of actions keeps (default 10000).
        trusted_origins: origins (``https://ops.example.com``) besides the dashboard's own
            whose pages may post actions: the address people use when a proxy in front
            changes the scheme or the host. An action whose ``Origin`` (else ``Referer``)
            is neither is refused (403) and audited.

    Raises:
        ConfigurationError: an `audit_length` below 1, or a trusted origin that is not
            ``scheme://host[:port]``.

    Examples:
        ```python
        from aqless.web import create_app

        client = aqless.Client("redis://localhost:6379")
        await client.open()  # at the application's start; closed at its end
        app.mount("/aqless", create_app(client, read_only=True))  # FastAPI or Starlette
        ```
    """
    check: AuthCheck | None = None
    middleware = [Middleware(SecurityHeaders)]
    if users is not None:
        middleware.append(Middleware(RequireUser, users=users))
    if isinstance(auth, Middleware):
        middleware.append(auth)
    elif isinstance(auth, Sequence):
        middleware += list(auth)
    elif auth is not None:
        check = auth
    key = secret.encode() if isinstance(secret, str) else secret
    app = Starlette(routes=routes(), middleware=middleware)
    app.state.dashboard = Dashboard(
        client=client,
        read_only=read_only,
        check=check,
        csrf=Csrf(key or secrets.token_bytes(32)),
        env=render.environment(),
        live_interval=live_interval,
        audit_length=audit.checked_length(audit_length),
        origins=Origins(trusted_origins),
    )
    return app
