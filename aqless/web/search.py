"""Search: a job by its jid (the header's box goes straight to its page), and a bounded scan
of one queue's jobs in one state for those whose data holds a value at a field path
(``user.id = 42``).

The scan never asks the server to look inside data: it lists at most `limit` jids of the
state (the call the queue page makes), then reads their stored data with HGET, pipelined
in batches of `BATCH` (one round trip each), and decodes and compares on the client. Its
cost to the server is one listing call per shard plus `limit` HGETs at most, each O(1) but
sending the whole data of its job: the page says how many jobs it read, in how many round
trips, and how many bytes of data came back.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from aqless import rules
from aqless.client import Client
from aqless.errors import ConnectionLostError, InvalidArgumentError
from aqless.ops import known
from aqless.sharding.client import AnyClient
from aqless.web.pages import Refused, dashboard, html_page
from aqless.web.reads import JSON, command_of, jobs_json
from aqless.web.render import Links

SCAN_DEFAULT: Final = 1000  # jobs a search reads unless told otherwise
SCAN_MAX: Final[int] = int(rules.RULES["search_limit"].maximum or 0)  # jobs read at most
BATCH: Final = 200  # HGETs per round trip
SHOWN: Final = 50  # matching jobs listed
#: The states a search reads: a listing's (aqless.rules' `state`) but recurring templates.
STATES: Final = tuple(s for s in rules.RULES["state"].choices if s != "recurring")


class SearchError(ValueError):
    """The search cannot run as asked (a malformed condition, no queue)."""


@dataclass(frozen=True, slots=True)
class Condition:
    """`path = value`: the field at `path` (keys, or list indexes) holds `value`, the JSON
    the right side parses as, else its text."""

    path: tuple[str, ...]
    value: Any
    text: str

    @classmethod
    def parse(cls, where: str) -> Condition:
        left, equals, right = where.partition("=")
        path = tuple(part.strip() for part in left.strip().split("."))
        if not equals or not all(path):
            raise SearchError(f"write a condition as field.path = value, not {where!r}")
        text = right.strip()
        try:
            value = json.loads(text)
        except ValueError:
            value = text
        return cls(path, value, text)

    def holds(self, data: Any) -> bool:
        found, value = field(data, self.path)
        if not found:
            return False
        if same(value, self.value):
            return True
        return isinstance(value, str) and value == self.text  # `name = 42` finds "42" too


def field(data: Any, path: Sequence[str]) -> tuple[bool, Any]:
    """Whether `data` has a value at `path`, and the value."""
    for key in path:
        if isinstance(data, dict) and key in data:
            data = data[key]
        elif isinstance(data, list) and key.isdigit() and int(key) < len(data):
            data = data[int(key)]
        else:
            return False, None
    return True, data


def same(found: Any, wanted: Any) -> bool:
    """JSON equality: `true` is not `1`, but `1` is `1.0`."""
    if isinstance(found, bool) or isinstance(wanted, bool):
        return found is wanted
    if isinstance(found, int | float) and isinstance(wanted, int | float):
        return bool(found == wanted)
    return type(found) is type(wanted) and bool(found == wanted)


def scan_limit(request: Request) -> int:
    """The ``limit`` parameter: how many jobs to read, 1 to SCAN_MAX (InvalidValueError
    otherwise)."""
    text = request.query_params.get("limit", str(SCAN_DEFAULT))
    limit: int = rules.RULES["search_limit"].parse(text, "limit", command_of(request))
    return limit


async def listing(client: Client, queue: str, state: str, count: int) -> list[str]:
    """At most `count` jids of the queue in `state`, as its page lists them."""
    if count <= 0:
        return []
    if state == "waiting":  # peek's order, without reading the jobs
        work = f"{client.prefix}q:{queue}-work"
        jids = await client.protocol.plain("search.list", "ZREVRANGE", work, 0, count - 1)
        return [str(jid) for jid in jids]
    return await client.queues[queue].jobs(state, count=count)


@dataclass
class Scan:
    """What a scan found and what it cost."""

    matches: list[str]
    matched: int = 0
    scanned: int = 0
    round_trips: int = 0
    data_bytes: int = 0
    undecodable: int = 0

    def cost(self, seconds: float) -> JSON:
        return {
            "jobs_read": self.scanned,
            "round_trips": self.round_trips,
            "data_bytes": self.data_bytes,
            "milliseconds": round(seconds * 1000, 1),
        }


async def scan_shard(
    client: Client, jids: Sequence[str], condition: Condition, found: Scan
) -> None:
    for start in range(0, len(jids), BATCH):
        batch = jids[start : start + BATCH]
        texts = await client.protocol.plain_many(
            "search.scan", [("HGET", f"{client.prefix}j:{jid}", "data") for jid in batch]
        )
        found.round_trips += 1
        for jid, text in zip(batch, texts, strict=True):
            if text is None:  # gone since the listing
                continue
            found.scanned += 1
            found.data_bytes += len(text.encode())
            try:
                data = json.loads(text)
            except ValueError:
                found.undecodable += 1
                continue
            if condition.holds(data):
                found.matched += 1
                if len(found.matches) < SHOWN:
                    found.matches.append(jid)


async def scan(
    client: AnyClient, queue: str, state: str, condition: Condition, limit: int
) -> tuple[Scan, float]:
    """The jobs of `queue` in `state` whose data meets `condition`, among at most `limit`
    of them (each shard's in turn), and the seconds the scan took."""
    started = time.perf_counter()
    found = Scan(matches=[])
    for shard in client.servers:
        jids = await listing(shard, queue, state, limit - found.scanned)
        found.round_trips += 1
        await scan_shard(shard, jids, condition, found)
    return found, time.perf_counter() - started


async def load(client: AnyClient, request: Request) -> JSON:
    """`/search` and `/api/search`: ``?jid=`` looks a job up; ``?queue=&state=&where=``
    (and ``limit``) scans a queue's jobs. A jid or queue the deployment does not know is a
    404, a malformed search a 400, each with the search form."""
    params = request.query_params
    jid = params.get("jid", "").strip()
    queue, state = params.get("queue", "").strip(), params.get("state", "waiting")
    where = params.get("where", "").strip()
    result: JSON = {
        "jid": jid,
        "found": None,
        "queue": queue,
        "state": state,
        "where": where,
        "limit": params.get("limit", SCAN_DEFAULT),
        "scan_max": SCAN_MAX,
        "states": list(STATES),
        "queues": await client.queues.names(),
        "error": None,
        "searched": False,
    }
    if jid:
        result["found"] = await client.jobs.get(jid) is not None
        if not result["found"]:
            raise Refused(404, f"no job {jid!r}", shown=result)
    if not (queue or where):
        return result
    try:
        result["limit"] = limit = scan_limit(request)
        state = rules.parse("state", state, command_of(request))
        if state not in STATES:
            raise SearchError("a search reads jobs, not recurring templates: choose a state")
        if not queue:
            raise SearchError("choose a queue")
        condition = Condition.parse(where)
        await known.require(client, "queue", queue)
    except known.UnknownNameError as missing:
        raise Refused(404, str(missing), shown={**result, "error": str(missing)}) from missing
    except InvalidArgumentError as error:
        raise Refused(400, error.detail, shown={**result, "error": error.detail}) from error
    except SearchError as error:
        raise Refused(400, str(error), shown={**result, "error": str(error)}) from error
    found, seconds = await scan(client, queue, state, condition, limit)
    total = int(getattr(await client.queues[queue].counts(), state))
    return {
        **result,
        "searched": True,
        "jobs": await jobs_json(client, found.matches),
        "matched": found.matched,
        "shown": len(found.matches),
        "scanned": found.scanned,
        "total": total,
        "complete": found.scanned >= total,
        "undecodable": found.undecodable,
        "cost": found.cost(seconds),
    }


_render = html_page("search.html", load)


async def page(request: Request) -> Response:
    """The search page; a jid that exists goes straight to its job's page."""
    jid = request.query_params.get("jid", "").strip()
    board = dashboard(request)
    if jid and await board.may(request, "view"):
        try:
            exists = await board.client.jobs.get(jid) is not None
        except ConnectionLostError:  # the server cannot serve now: the page says why
            exists = False
        if exists:
            return RedirectResponse(Links(request)("job", jid=jid), status_code=303)
    return await _render(request)
