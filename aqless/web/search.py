"""Search: a job by its jid (the header's box goes straight to its page), and one bounded
search over every queue and every state by jid, class, tag, failure group, worker, queue, a
data field and a result field (`aqless.ops.search`, the CLI's ``aqless search`` too), with
its server cost stated; the names its form offers as they are typed (``/api/search/names``);
and how far an action on everything found has got (``/api/search/progress``).
"""

from __future__ import annotations

from typing import Any, Final

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from aqless.errors import ConnectionLostError, InvalidArgumentError
from aqless.ops import known, suggest
from aqless.ops import search as finding
from aqless.ops.bulk import VERBS
from aqless.sharding.client import AnyClient
from aqless.web import tallies
from aqless.web.pages import Refused, dashboard, html_page
from aqless.web.reads import JSON, jobs_json
from aqless.web.render import Links

INPUTS: Final = finding.INPUTS


def given(fields: Any) -> dict[str, list[str]]:
    """The search inputs of a query string or a form (each name's values)."""
    return {name: list(fields.getlist(name)) for name in INPUTS}


async def load(client: AnyClient, request: Request) -> JSON:
    """`/search` and `/api/search`: ``?jid=`` alone looks a job up; any other input searches
    (``class``, ``tag``, ``group``, ``worker``, ``queue``, ``state`` (repeated or comma
    separated), ``where``, ``result``, ``limit``, ``shown``). An input out of its rule is a
    400, a queue or failure group the deployment does not know a 404, each with the form."""
    params = request.query_params
    inputs = given(params)
    result: JSON = {
        **{name: (values[0] if values else "") for name, values in inputs.items()},
        "chosen_states": [s for text in inputs["state"] for s in text.split(",") if s],
        "found": None,
        "limit": params.get("limit", finding.LIMIT_DEFAULT),
        "shown": params.get("shown", finding.SHOWN_DEFAULT),
        "scan_max": finding.LIMIT_MAX,
        "states": list(finding.STATES),
        "actions": list(VERBS),
        "carried": [  # what an action on the found jobs searches again
            (name, value.strip()) for name in INPUTS for value in inputs[name] if value.strip()
        ],
        "error": None,
        "searched": False,
    }
    jid = (params.get("jid") or "").strip()
    others = [name for name in INPUTS if name != "jid" and any(v.strip() for v in inputs[name])]
    if jid and not others:
        result["found"] = await client.jobs.get(jid) is not None
        if not result["found"]:
            raise Refused(404, f"no job {jid!r}", shown=result)
        return result
    if not others:
        return result
    try:
        filters = finding.Filters.parse(inputs)
        limit, shown = finding.limits(params.get("limit"), params.get("shown"))
        await finding.require_known(client, filters)
    except known.UnknownNameError as missing:
        raise Refused(404, str(missing), shown={**result, "error": str(missing)}) from missing
    except InvalidArgumentError as error:
        raise Refused(400, error.detail, shown={**result, "error": error.detail}) from error
    found = await finding.find(client, filters, limit=limit)
    document = found.document(shown)
    return {
        **result,
        **document,
        "limit": limit,
        "shown": len(document["jids"]),
        "searched": True,
        "jobs": await jobs_json(client, document["jids"]),
        "scanned": found.examined,
        "total": found.listed,
    }


_render = html_page("search.html", load)


async def page(request: Request) -> Response:
    """The search page; a jid alone that exists goes straight to its job's page."""
    jid = request.query_params.get("jid", "").strip()
    board = dashboard(request)
    alone = not any(request.query_params.get(name, "").strip() for name in INPUTS[1:])
    if jid and alone and await board.may(request, "view"):
        try:
            exists = await board.client.jobs.get(jid) is not None
        except ConnectionLostError:  # the server cannot serve now: the page says why
            exists = False
        if exists:
            return RedirectResponse(Links(request)("job", jid=jid), status_code=303)
    return await _render(request)


async def names(request: Request) -> Response:
    """``/api/search/names``: the queues, tags, failure groups, workers and classes the
    search form offers (`aqless.ops.suggest.names`: bounded reads of the indexes)."""
    board = dashboard(request)
    if not await board.may(request, "view"):
        return JSONResponse({"ok": False, "error": "forbidden"}, status_code=403)
    try:
        return JSONResponse(await suggest.names(board.client))
    except ConnectionLostError as error:
        return JSONResponse({"ok": False, "error": str(error)}, status_code=503)


async def progress(request: Request) -> Response:
    """``/api/search/progress?id=``: how many jobs of an action on a search's jobs are done
    (``started`` false: no action of that id has started in this process)."""
    board = dashboard(request)
    if not await board.may(request, "view"):
        return JSONResponse({"ok": False, "error": "forbidden"}, status_code=403)
    tally = tallies.get(request.query_params.get("id", ""))
    if tally is None:  # not started yet (the page asks from the moment it sends the action)
        return JSONResponse({"ok": True, "started": False, "total": 0, "done": 0})
    return JSONResponse({"ok": True, "started": True, **tally.document()})
