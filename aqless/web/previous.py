"""What an edit from the dashboard replaces: the value each editing verb is about to change,
read before it runs, for the action's audit entry (``previous``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Final

from redis import exceptions as redis_errors

from aqless.errors import AqlessError
from aqless.job import RecurringJob
from aqless.sharding.client import AnyClient
from aqless.web.actions import ActionError, Form

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
    return f"{every}, priority {found.priority:g}, retries {found.retries}, backlog {found.backlog}"


async def _queue_throttle(client: AnyClient, form: Form) -> str:
    return str((await client.queues[form.text("queue")].throttle()).maximum)


async def _group(client: AnyClient, form: Form) -> str | None:
    name = (form.get("group") or "").strip() or None
    for group in await client.queues[form.text("queue")].groups():
        if group.name == name:
            rate = f"{group.rate_limit}/{group.rate_period:g}" if group.rate_limit else "none"
            return f"weight {group.weight:g}, concurrency {group.concurrency}, rate {rate}"
    return None


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
    "group_set": _group,
    "recurring_update": _recurring,
    "throttle_set": _throttle,
    "throttle_delete": _throttle,
    "config_set": _config,
    "config_unset": _config,
    "identifier_set": _identifier,
    "identifier_unset": _identifier,
    "priorities_set": _priorities,
}


async def previous_value(client: AnyClient, verb: str, form: Form) -> str | None:
    """The value the edit `verb` is about to replace; None for another verb, or when it
    cannot be read (the action will then say why it failed)."""
    read = PREVIOUS.get(verb)
    if read is None:
        return None
    try:
        return await read(client, form)
    except (ActionError, AqlessError, redis_errors.RedisError):
        return None
