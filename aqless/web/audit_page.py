"""The audit log in the dashboard: each action's entry (who, what, when, the outcome, the
value an edit replaced, the jobs a bulk action changed), each refused request's, and the
Audit page that lists the log, newest first."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Final

from redis import exceptions as redis_errors
from starlette.requests import Request

from aqless.errors import AqlessError
from aqless.ops import audit as audit_log
from aqless.ops.known import UnknownNameError
from aqless.sharding.client import AnyClient
from aqless.web.actions import ACTED_ON, ActionError, Form, Handler
from aqless.web.auth import who
from aqless.web.previous import previous_value
from aqless.web.reads import JSON, paging, window
from aqless.web.security import CSRF_FIELD

#: The form fields that name what an action is done to; the others are its details.
TARGET_FIELDS: Final = ("jid", "queue", "group", "option", "name", "worker")
SKIPPED_FIELDS: Final = (CSRF_FIELD, "next", "progress")
MOST_TARGETS: Final = 100  # jids of one bulk action kept in its entry
#: The actions on a search's whole set, whose entry names every jid changed (at most the
#: search's limit, `aqless.rules` ``search_limit``).
WHOLE_SETS: Final = ("search_act",)
_LONGEST: Final = 200

logger = logging.getLogger("aqless.web")


def _short(text: str) -> str:
    return text if len(text) <= _LONGEST else text[: _LONGEST - 1] + "…"


def action_entry(
    request: Request, form: Form, outcome: str, more: Mapping[str, str] | None = None
) -> audit_log.AuditEntry:
    """The entry of the action `request` asked for with `form`; `more`: details the form
    does not hold (the value an edit replaced, the jobs a bulk action changed)."""
    verb = str(request.path_params.get("verb", ""))
    targets = [_short(value) for name in TARGET_FIELDS for value in form.all(name)]
    detail: dict[str, str] = {}
    if len(targets) > MOST_TARGETS:
        detail["targets"] = f"{len(targets)} in all"
        targets = targets[:MOST_TARGETS]
    for name, value in form.fields:
        if name not in TARGET_FIELDS and name not in SKIPPED_FIELDS and value.strip():
            detail[name] = _short(value)
    detail.update(more or {})
    return audit_log.entry(who(request), "web", verb, targets, detail, _short(outcome))


def acted_on(jids: Sequence[str], most: int = MOST_TARGETS) -> dict[str, str]:
    """A bulk action's details: how many jobs it changed, and the first `most`."""
    listed = ", ".join(jids[:most])
    if len(jids) > most:
        listed += f" (and {len(jids) - most} more)"
    return {"count": str(len(jids)), "jids": listed}


async def recorded_action(
    client: AnyClient, request: Request, form: Form, outcome: str, length: int
) -> None:
    """Add the entry of a request that changed nothing (refused) to the log."""
    await _recorded(client, action_entry(request, form, outcome), length)


async def audited_action(
    client: AnyClient, request: Request, form: Form, handler: Handler, length: int
) -> tuple[int, str]:
    """Do the action, then add its entry to the log, with the value it replaced (an edit)
    and the jobs it changed (a bulk action). Returns the HTTP status it earns (200 done, 404
    for a name never seen, 400 for another refusal) and what to say."""
    verb = str(request.path_params.get("verb", ""))
    more: dict[str, str] = {}
    if (previous := await previous_value(client, verb, form)) is not None:
        more["previous"] = _short(previous)
    ACTED_ON.set(None)
    status = 200
    try:
        message = await handler(client, form)
    except (ActionError, AqlessError, UnknownNameError) as error:
        message = str(error)
        status = 404 if isinstance(error, UnknownNameError) else 400
    if (jids := ACTED_ON.get()) is not None:
        more.update(acted_on(jids, len(jids) if verb in WHOLE_SETS else MOST_TARGETS))
    outcome = "ok" if status == 200 else message
    await _recorded(client, action_entry(request, form, outcome, more), length)
    return status, message


async def _recorded(client: AnyClient, entry: audit_log.AuditEntry, length: int) -> None:
    """A log the server cannot take is logged here (the action itself is done by then)."""
    try:
        await audit_log.record(client, entry, length=length)
    except (AqlessError, redis_errors.RedisError) as error:
        logger.warning("the audit log did not take an entry: %s", error)


async def audit(client: AnyClient, request: Request) -> JSON:
    """The Audit page: a page of the log, newest first."""
    page, size, offset = window(request)
    entries, total = await audit_log.page(client, limit=size, offset=offset)
    return {
        "entries": [entry.document() for entry in entries],
        **paging(request, page, total, size),
    }
