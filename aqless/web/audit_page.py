"""The audit log in the dashboard: each action's entry (who, what, when, the outcome, the
value an edit replaced, the jobs a bulk action changed), each refused request's, and the
Audit page that lists the log, newest first."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Final

from redis import exceptions as redis_errors
from starlette.requests import Request

from aqless.errors import AqlessError
from aqless.job import RecurringJob
from aqless.ops import audit as audit_log
from aqless.sharding.client import AnyClient
from aqless.web.actions import ACTED_ON, ActionError, Form, Handler
from aqless.web.auth import who
from aqless.web.reads import JSON, PAGE_SIZE, page_number
from aqless.web.security import CSRF_FIELD

#: The form fields that name what an action is done to; the others are its details.
TARGET_FIELDS: Final = ("jid", "queue", "group", "option", "name", "worker")
SKIPPED_FIELDS: Final = (CSRF_FIELD, "next")
MOST_TARGETS: Final = 100  # jids of one bulk action kept in its entry
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


def acted_on(jids: Sequence[str]) -> dict[str, str]:
    """A bulk action's details: how many jobs it changed, and the first `MOST_TARGETS`."""
    listed = ", ".join(jids[:MOST_TARGETS])
    if len(jids) > MOST_TARGETS:
        listed += f" (and {len(jids) - MOST_TARGETS} more)"
    return {"count": str(len(jids)), "jids": listed}


async def recorded_action(
    client: AnyClient, request: Request, form: Form, outcome: str, length: int
) -> None:
    """Add the entry of a request that changed nothing (refused) to the log."""
    await _recorded(client, action_entry(request, form, outcome), length)


async def audited_action(
    client: AnyClient, request: Request, form: Form, handler: Handler, length: int
) -> tuple[bool, str]:
    """Do the action, then add its entry to the log, with the value it replaced (an edit)
    and the jobs it changed (a bulk action). Returns whether it was done, and what to say."""
    verb = str(request.path_params.get("verb", ""))
    more: dict[str, str] = {}
    if (previous := await _previous(client, verb, form)) is not None:
        more["previous"] = _short(previous)
    ACTED_ON.set(None)
    try:
        done, message = True, await handler(client, form)
    except (ActionError, AqlessError) as error:
        done, message = False, str(error)
    if (jids := ACTED_ON.get()) is not None:
        more.update(acted_on(jids))
    await _recorded(client, action_entry(request, form, "ok" if done else message, more), length)
    return done, message


async def _recorded(client: AnyClient, entry: audit_log.AuditEntry, length: int) -> None:
    """A log the server cannot take is logged here (the action itself is done by then)."""
    try:
        await audit_log.record(client, entry, length=length)
    except (AqlessError, redis_errors.RedisError) as error:
        logger.warning("the audit log did not take an entry: %s", error)


# -- what an edit replaces -------------------------------------------------------------------

NOT_SET: Final = "(not set)"
Previous = Callable[[AnyClient, Form], Awaitable[str | None]]


async def _job_priority(client: AnyClient, form: Form) -> str | None:
    found = await client.jobs.get(form.text("jid"))
    return None if found is None else f"{found.priority:g}"


async def _job_queue(client: AnyClient, form: Form) -> str | None:
    found = await client.jobs.get(form.text("jid"))
    return None if found is None else found.queue_name


async def _recurring(client: AnyClient, form: Form) -> str | None:
    found = await client.jobs.get(form.text("jid"))
    if not isinstance(found, RecurringJob):
        return None
    every = f"cron {found.cron} ({found.tz})" if found.cron else f"every {found.interval:g} s"
    return f"{every}, priority {found.priority:g}, retries {found.retries}"


async def _queue_throttle(client: AnyClient, form: Form) -> str:
    return str((await client.queues[form.text("queue")].throttle()).maximum)


async def _throttle(client: AnyClient, form: Form) -> str:
    found = await client.throttles[form.text("name")].get()
    return f"maximum {found.maximum}, ttl {found.ttl}"


async def _config(client: AnyClient, form: Form) -> str | None:
    found = await client.config.get(form.text("option"))
    return NOT_SET if found is None else found


async def _identifier(client: AnyClient, form: Form) -> str | None:
    found = (await client.queue_patterns.identifiers()).get(form.text("name"))
    return NOT_SET if found is None else ", ".join(found)


async def _priorities(client: AnyClient, form: Form) -> str:
    return " > ".join(str(group) for group in await client.queue_patterns.priorities())


#: How to read the value each editing verb replaces, before it runs.
PREVIOUS: Final[dict[str, Previous]] = {
    "job_priority": _job_priority,
    "job_move": _job_queue,
    "queue_throttle": _queue_throttle,
    "recurring_update": _recurring,
    "throttle_set": _throttle,
    "throttle_delete": _throttle,
    "config_set": _config,
    "config_unset": _config,
    "identifier_set": _identifier,
    "identifier_unset": _identifier,
    "priorities_set": _priorities,
}


async def _previous(client: AnyClient, verb: str, form: Form) -> str | None:
    """The value the edit `verb` is about to replace; None for another verb, or when it
    cannot be read (the action will then say why it failed)."""
    read = PREVIOUS.get(verb)
    if read is None:
        return None
    try:
        return await read(client, form)
    except (ActionError, AqlessError, redis_errors.RedisError):
        return None


async def audit(client: AnyClient, request: Request) -> JSON:
    """The Audit page: a page of the log, newest first."""
    page = page_number(request)
    entries = await audit_log.read(client, limit=PAGE_SIZE + 1, offset=(page - 1) * PAGE_SIZE)
    more = len(entries) > PAGE_SIZE
    return {
        "entries": [entry.document() for entry in entries[:PAGE_SIZE]],
        "page": page,
        "pages": page + 1 if more else page,
    }
