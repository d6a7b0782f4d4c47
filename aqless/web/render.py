"""HTML pages: the Jinja environment (autoescaped), its filters, links that work under any
mount prefix, and the one-shot flash message that follows an action (with, after a refusal,
what the form held, so that it is shown again as typed)."""

from __future__ import annotations

import datetime
import json
import time
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import quote, unquote

import jinja2
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from aqless import rules
from aqless.documents import json_preview
from aqless.ops.durations import duration, relative
from aqless.ops.emptying import DEFAULT_STATES, in_order
from aqless.ops.known import limit_label
from aqless.rules import OVERLAPS
from aqless.web import charts, classes, throughput, workflows
from aqless.web.security import CSRF_FIELD, root_path, set_private_cookie

FLASH_COOKIE: Final = "aqless_flash"
TYPED_COOKIE: Final = "aqless_typed"
MOST_TYPED: Final = 2000  # bytes of a refused form's values (quoted) kept for its page


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("aqless.web", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        when=when,
        ago=ago,
        duration=duration,
        pretty=pretty,
        preview=json_preview,
        number=number,
        seconds=duration,
        limit_label=limit_label,
        parked=workflows.parked_text,
        parked_until=workflows.parked_until,
        parked_signal=workflows.parked_signal,
        workflow_steps=workflows.workflow_steps,
    )
    env.globals.update(
        queue_charts=charts.queue_charts, shard_chart=charts.shard_chart, csrf_field=CSRF_FIELD
    )
    env.globals.update(throughput_charts=throughput.throughput_charts)
    env.globals.update(page_numbers=page_numbers, page_sizes=PAGE_SIZES)
    env.globals.update(class_charts=classes.class_charts)
    # what the queue page's "Empty" cancels: `aqless queue empty`'s default states
    env.globals.update(emptied_states=in_order(DEFAULT_STATES))
    env.globals.update(overlaps=OVERLAPS)  # the recurring form's choices
    return env


def when(timestamp: float | None) -> str:
    if not timestamp:
        return "—"
    moment = datetime.datetime.fromtimestamp(timestamp, datetime.UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def ago(timestamp: float | None, now: float | None = None) -> str:
    """``3 min ago``, ``in 58 min 47 s``; "" for no time."""
    if not timestamp:
        return ""
    return relative(timestamp - (now if now is not None else time.time()))


def pretty(value: Any) -> str:
    """JSON for people: indented, non-ASCII kept (autoescaping makes it inert)."""
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


def number(value: float) -> str:
    return f"{value:g}"


class Links:
    """Paths of the dashboard's routes, prefixed by where it is mounted. Path parameters are
    percent-encoded whole, so a jid or queue name with `/`, `?` or `#` links correctly."""

    def __init__(self, request: Request) -> None:
        self._request = request
        self._root = root_path(request)

    def __call__(self, route: str, /, **params: Any) -> str:
        quoted = {key: quote(str(value), safe="") for key, value in params.items()}
        path: str = self._request.app.url_path_for(route, **quoted)
        return self._root + path

    def asset(self, path: str) -> str:
        found: str = self._request.app.url_path_for("static", path="/" + path)
        return self._root + found


def take_flash(request: Request) -> dict[str, str] | None:
    raw = request.cookies.get(FLASH_COOKIE)
    if not raw:
        return None
    kind, _, text = unquote(raw).partition(":")
    return {"kind": "error" if kind == "error" else "ok", "text": text}


def take_typed(request: Request) -> dict[str, str]:
    """What a refused form held (its first value of each field), or nothing."""
    try:
        typed = json.loads(unquote(request.cookies.get(TYPED_COOKIE) or "{}"))
    except ValueError:
        return {}
    if not isinstance(typed, dict):
        return {}
    return {str(key): str(value) for key, value in typed.items()}


def set_flash(
    response: Response,
    request: Request,
    kind: str,
    text: str,
    typed: Mapping[str, str] | None = None,
) -> None:
    """The message the next page shows once; with `typed`, the refused form's values, which
    that page puts back in its form (escaped like every value), unless they are too long."""
    cookies = [(FLASH_COOKIE, quote(f"{kind}:{text[:400]}", safe=""))]
    kept = quote(json.dumps(dict(typed or {})), safe="")
    if typed and len(kept) <= MOST_TYPED:  # a cookie holds about 4 KB
        cookies.append((TYPED_COOKIE, kept))
    for name, value in cookies:
        set_private_cookie(response, request, name, value, max_age=60)


def html(
    env: jinja2.Environment,
    request: Request,
    template: str,
    context: dict[str, Any],
    *,
    status: int = 200,
) -> HTMLResponse:
    flash = take_flash(request)
    typed = take_typed(request) if flash is not None else {}
    body = env.get_template(template).render(
        request=request,
        url=Links(request),
        here=request.url.path + (f"?{request.url.query}" if request.url.query else ""),
        flash=flash,
        typed=typed,
        now=time.time(),
        **context,
    )
    response = HTMLResponse(body, status_code=status, headers={"cache-control": "no-store"})
    if flash is not None:
        for name in (FLASH_COOKIE, TYPED_COOKIE):
            response.delete_cookie(name, path=root_path(request) or "/")
    return response


#: The page sizes a listing offers (the rule ``page_size``); the first is the default.
PAGE_SIZES: Final = tuple(int(size) for size in rules.RULES["page_size"].choices)


def page_numbers(page: int, pages: int, around: int = 2) -> list[int | None]:
    """The page numbers a pager links: the first, the last, and `around` either side of
    `page`; None where numbers are left out (drawn as an ellipsis). Bounded whatever
    `pages` is.

    >>> page_numbers(7, 40)
    [1, None, 5, 6, 7, 8, 9, None, 40]
    """
    shown = sorted({1, pages, *range(max(1, page - around), min(pages, page + around) + 1)})
    numbers: list[int | None] = []
    for number in shown:
        if numbers and number - (numbers[-1] or 0) > 1:
            numbers.append(None)
        numbers.append(number)
    return numbers
