"""The endpoints: each page as HTML and as JSON under /api, the action verbs (POST), and
the live event stream. Permission, read-only mode, the origin and CSRF are checked here,
once."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import parse_qsl, urlsplit

import jinja2
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from aqless.errors import ConnectionLostError, InvalidArgumentError
from aqless.ops import audit
from aqless.ops.known import UnknownNameError
from aqless.sharding.client import AnyClient
from aqless.web import render
from aqless.web.actions import HANDLERS, Form
from aqless.web.audit_page import audited_action, recorded_action
from aqless.web.auth import user_of
from aqless.web.condition import refused, unavailable
from aqless.web.live import EventSourceResponse
from aqless.web.reads import Loader, NotFound
from aqless.web.security import (
    CSRF_FIELD,
    CSRF_HEADER,
    AuthCheck,
    Csrf,
    Origins,
    allowed,
    safe_next,
)

MAX_FORM: Final = 1 << 20  # bytes

Endpoint = Callable[[Request], Awaitable[Response]]


@dataclass(frozen=True, slots=True)
class Dashboard:
    """Everything the endpoints share: one per app, kept in ``app.state.dashboard``."""

    client: AnyClient
    read_only: bool
    check: AuthCheck | None
    csrf: Csrf
    env: jinja2.Environment
    live_interval: float
    audit_length: int = audit.DEFAULT_LENGTH
    origins: Origins = field(default_factory=Origins)

    async def may(self, request: Request, permission: str) -> bool:
        if permission == "act":
            user = user_of(request)
            if self.read_only or (user is not None and not user.may_act):
                return False
            return await allowed(self.check, request, "act")
        return await allowed(self.check, request, "view")


def dashboard(request: Request) -> Dashboard:
    found: Dashboard = request.app.state.dashboard
    return found


def wants_json(request: Request) -> bool:
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/html" not in accept


def refusal(request: Request, status: int, message: str) -> Response:
    if wants_json(request):
        return JSONResponse({"ok": False, "error": message}, status_code=status)
    board = dashboard(request)
    context = {"read_only": board.read_only, "can_act": False, "csrf": "", "status": status}
    return render.html(
        board.env, request, "error.html", {**context, "message": message}, status=status
    )


class Refused(Exception):
    """A page that cannot be shown as asked: its HTTP status and why; `shown`: what the page
    shows all the same (its form, with the reason), else the error page is shown."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        shown: dict[str, Any] | None = None,
        document: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.shown = shown
        self.document = {**(shown or {}), **(document or {}), "ok": False, "error": message}


async def loaded(load: Loader, board: Dashboard, request: Request) -> dict[str, Any]:
    """What `load` reads for `request`; Refused with 404 for a name the deployment does not
    know, 400 for an input out of its rule (an unknown state, a page past the last), 503
    when the server cannot serve."""
    try:
        return await load(board.client, request)
    except (NotFound, UnknownNameError) as missing:
        raise Refused(404, str(missing)) from missing
    except InvalidArgumentError as error:
        raise Refused(400, error.detail) from error
    except ConnectionLostError as error:  # the server cannot serve now, or is away
        raise Refused(503, refused(error), document=unavailable(error)) from error


def html_page(template: str, load: Loader) -> Endpoint:
    async def endpoint(request: Request) -> Response:
        board = dashboard(request)
        if not await board.may(request, "view"):
            return refusal(request, 403, "You may not see this dashboard.")
        status = 200
        try:
            data = await loaded(load, board, request)
        except Refused as refused_page:
            if refused_page.shown is None:
                return refusal(request, refused_page.status, refused_page.message)
            data, status = refused_page.shown, refused_page.status
        can_act = await board.may(request, "act")
        nonce, new = board.csrf.nonce(request)
        context = {
            **data,
            "read_only": board.read_only,
            "sharded": board.client.sharded,
            "can_act": can_act,
            "csrf": board.csrf.token(nonce),
        }
        response = render.html(board.env, request, template, context, status=status)
        if new:
            board.csrf.set_cookie(response, request, nonce)
        return response

    return endpoint


def api_page(load: Loader) -> Endpoint:
    async def endpoint(request: Request) -> Response:
        board = dashboard(request)
        if not await board.may(request, "view"):
            return JSONResponse({"ok": False, "error": "forbidden"}, status_code=403)
        try:
            return JSONResponse(await loaded(load, board, request))
        except Refused as refused_page:
            return JSONResponse(refused_page.document, status_code=refused_page.status)

    return endpoint


async def act(request: Request) -> Response:
    """POST /actions/<verb>: check, then change; answer JSON or redirect back with a flash."""
    board = dashboard(request)
    handler = HANDLERS.get(request.path_params["verb"])
    if handler is None:
        return refusal(request, 404, "No such action.")
    body = await request.body()
    if len(body) > MAX_FORM:
        return refusal(request, 413, "The form is too large.")
    form = Form(parse_qsl(body.decode("utf-8", errors="replace"), keep_blank_values=True))
    if (why := await forbidden(board, request, form)) is not None:
        await recorded_action(board.client, request, form, f"refused: {why}", board.audit_length)
        return refusal(request, 403, why)
    status, message = await audited_action(board.client, request, form, handler, board.audit_length)
    kind = "ok" if status == 200 else "error"
    if wants_json(request):
        return JSONResponse({"ok": kind == "ok", "message": message}, status_code=status)
    # done: where the form says (a cancelled job's page is gone); refused: back to the form
    target = form.get("next") if kind == "ok" else came_from(request)
    response = RedirectResponse(safe_next(request, target), status_code=303)
    typed = None if kind == "ok" else typed_fields(form)
    render.set_flash(response, request, kind, message, typed)
    return response


def typed_fields(form: Form) -> dict[str, str]:
    """A refused form's values to show again (the first of each field; no token)."""
    typed: dict[str, str] = {}
    for key, value in form.fields:
        if key not in (CSRF_FIELD, "next"):
            typed.setdefault(key, value)
    return typed


async def forbidden(board: Dashboard, request: Request, form: Form) -> str | None:
    """Why this action is refused, or None: a read-only dashboard or user, the host's auth
    hook, a request from another site's page, a CSRF token missing or wrong."""
    if board.read_only:
        return "This dashboard is read-only."
    if not await board.may(request, "act"):
        return "You may not act on this dashboard."
    if (elsewhere := board.origins.refusal(request)) is not None:
        return elsewhere
    if not board.csrf.valid(request, form.get(CSRF_FIELD) or request.headers.get(CSRF_HEADER)):
        return "The form has expired (CSRF token missing or wrong): reload the page."
    return None


def came_from(request: Request) -> str | None:
    referer = urlsplit(request.headers.get("referer", ""))
    if referer.netloc != request.url.netloc:
        return None
    return referer.path + (f"?{referer.query}" if referer.query else "")


async def events(request: Request) -> Response:
    board = dashboard(request)
    if not await board.may(request, "view"):
        return JSONResponse({"ok": False, "error": "forbidden"}, status_code=403)
    return EventSourceResponse(board.client, interval=board.live_interval)
