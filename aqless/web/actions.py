"""The state-changing verbs the dashboard offers, one handler per verb. Each takes the
submitted form and returns what to tell the person; the caller (`pages.act`) has already
checked permission, read-only mode and the CSRF token."""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from typing import Any, Final

from aqless import rules
from aqless.errors import AqlessError, InvalidArgumentError
from aqless.job import Job, RecurringJob
from aqless.models import PriorityPattern
from aqless.ops import bulk, known
from aqless.ops import search as finding
from aqless.ops.control import control_worker
from aqless.ops.durations import plural
from aqless.ops.emptying import DEFAULT_STATES, cancel_all, in_order, listed
from aqless.ops.groups import NONE, GroupSettings, Rate
from aqless.ops.params import parse_moment
from aqless.schedules import CronSchedule
from aqless.sharding.client import AnyClient
from aqless.web import tallies

BULK_LIMIT: Final = 10_000  # jobs one group action touches at most
#: The jids the request's bulk action changed, for its audit entry (None: not a bulk action).
ACTED_ON: ContextVar[list[str] | None] = ContextVar("aqless_web_acted_on", default=None)


class ActionError(Exception):
    """The request cannot be carried out (bad input, missing job); nothing was changed."""


class Form:
    """A submitted form: each field may come several times (checkboxes)."""

    def __init__(self, fields: Sequence[tuple[str, str]]) -> None:
        self._fields = fields

    @property
    def fields(self) -> Sequence[tuple[str, str]]:
        return self._fields

    def all(self, name: str) -> list[str]:
        return [value for key, value in self._fields if key == name]

    def get(self, name: str) -> str | None:
        values = self.all(name)
        return values[0] if values else None

    def text(self, name: str) -> str:
        value = (self.get(name) or "").strip()
        if not value:
            raise ActionError(f"{name} is required")
        return value

    def number(self, name: str) -> float:
        try:
            return float(self.text(name))
        except ValueError:
            raise ActionError(f"{name} must be a number") from None

    def ruled(self, name: str) -> Any:
        """The field `name` parsed and checked by the rule of that name (`aqless.rules`):
        InvalidValueError, naming it, when outside."""
        return rules.parse(name, self.text(name), "dashboard")

    def recurring(self, name: str) -> Any:
        """The field of a recurring job's input `name`, parsed and checked by its rule
        (`aqless.rules.parse_recurring`); None when left empty."""
        if not (self.get(name) or "").strip():
            return None
        return rules.parse_recurring(name, self.text(name), "dashboard")


Handler = Callable[[AnyClient, Form], Awaitable[str]]


async def a_job(client: AnyClient, jid: str) -> Job:
    found = await client.jobs.get(jid)
    if not isinstance(found, Job):
        raise ActionError(f"no job {jid!r}")
    return found


async def a_template(client: AnyClient, jid: str) -> RecurringJob:
    found = await client.jobs.get(jid)
    if not isinstance(found, RecurringJob):
        raise ActionError(f"no recurring job {jid!r}")
    return found


def words(text: str) -> list[str]:
    return [word for word in re.split(r"[,\s]+", text) if word]


# -- queues ----------------------------------------------------------------------------------


async def queue_pause(client: AnyClient, form: Form) -> str:
    name = form.text("queue")
    await client.queues[name].pause()
    return f"Paused {name}"


async def queue_unpause(client: AnyClient, form: Form) -> str:
    name = form.text("queue")
    await client.queues[name].unpause()
    return f"Resumed {name}"


async def queue_throttle(client: AnyClient, form: Form) -> str:
    name, maximum = form.text("queue"), form.ruled("maximum")
    await client.queues[name].set_throttle(maximum)  # a sharded deployment pins the queue
    return f"{name} runs at most {maximum} jobs at once" if maximum else f"{name} is unthrottled"


async def group_set(client: AnyClient, form: Form) -> str:
    """A fairness group's weight, concurrency cap and rate limit (those filled in; the
    others stay), from the queue page's groups table. Every value is checked before any is
    written, by the rules the verbs and `aqless groups set` check them with: concurrency
    0 lifts the cap, a rate limit of "none" lifts the limit. An empty `group` is the jobs
    put without one."""
    queue = form.text("queue")
    named = (form.get("group") or "").strip()
    group = rules.check("group", named, "dashboard") if named else None
    given = {name for name in ("weight", "concurrency", "limit") if (form.get(name) or "").strip()}
    if not given:
        raise ActionError("give a weight, a concurrency cap or a rate limit")
    weight = form.ruled("weight") if "weight" in given else None
    concurrency = form.ruled("concurrency") if "concurrency" in given else None
    lifted = "limit" in given and form.text("limit").lower() == NONE
    limit = form.ruled("limit") if "limit" in given and not lifted else None
    per = form.ruled("per") if limit is not None and (form.get("per") or "").strip() else 1.0
    rate = Rate(limit, per) if "limit" in given else None
    await GroupSettings(weight, concurrency, rate).apply(client, queue, group)
    shown = "(none)" if group is None else group
    return f"Set group {shown} of {queue}: " + ", ".join(sorted(given))


async def queue_empty(client: AnyClient, form: Form) -> str:
    """Cancel the queue's waiting, scheduled, depends and throttled jobs, paced as the CLI's
    `queue empty` (the same code); the jobs others depend on are kept, and said."""
    name = form.ruled("queue")
    emptying = await listed(client, name, in_order(DEFAULT_STATES))
    if emptying.total == 0:
        raise ActionError(f"{name}: no job to cancel")
    await cancel_all(client, emptying)
    ACTED_ON.set([jid for jid in emptying.jids if jid not in emptying.kept])
    outcome = emptying.outcome()
    kept = list(emptying.kept.items())[:3]
    if kept:
        outcome += " (" + "; ".join(f"{jid}: {reason}" for jid, reason in kept) + ")"
    return outcome[0].upper() + outcome[1:]


# -- one job ---------------------------------------------------------------------------------


def one_job(verb: Callable[[Job], Awaitable[object]], done: str) -> Handler:
    """A handler doing `verb` to the job the form names; `done` is said with its jid."""

    async def handler(client: AnyClient, form: Form) -> str:
        job = await a_job(client, form.text("jid"))
        await verb(job)
        return done.format(jid=job.jid, queue=job.queue_name)

    return handler


async def requeue(job: Job) -> None:
    await job.move(job.queue_name)


async def job_move(client: AnyClient, form: Form) -> str:
    job, queue = await a_job(client, form.text("jid")), form.text("queue")
    await job.move(queue)
    return f"Moved {job.jid} to {queue}"


async def job_priority(client: AnyClient, form: Form) -> str:
    job, priority = await a_job(client, form.text("jid")), form.number("priority")
    await job.set_priority(priority)
    return f"Priority of {job.jid} is {priority:g}"


async def job_tag(client: AnyClient, form: Form) -> str:
    tags = words(form.text("tags"))
    found = await client.jobs.get(form.text("jid"))
    if found is None:
        raise ActionError(f"no job {form.text('jid')!r}")
    await found.tag(*tags)
    return f"Tagged {found.jid}: {', '.join(tags)}"


async def job_untag(client: AnyClient, form: Form) -> str:
    tag = form.text("tag")
    found = await client.jobs.get(form.text("jid"))
    if found is None:
        raise ActionError(f"no job {form.text('jid')!r}")
    await found.untag(tag)
    return f"Removed tag {tag} from {found.jid}"


async def job_signal(client: AnyClient, form: Form) -> str:
    """Send a signal (``signal``, ``payload`` as JSON, optional ``signal_id``) to the
    workflow ``jid`` (aqless.workflows); say what became of it."""
    jid, name = form.text("jid"), form.ruled("signal")
    try:
        payload = json.loads((form.get("payload") or "").strip() or "null")
    except ValueError as error:
        raise ActionError(f"the payload is not JSON: {error}") from None
    signal_id = form.ruled("signal_id") if (form.get("signal_id") or "").strip() else None
    delivery = await client.signal(jid, name, payload, signal_id=signal_id)
    return f"Signal {name} to {jid}: {delivery}"


async def job_undepend(client: AnyClient, form: Form) -> str:
    job, dependency = await a_job(client, form.text("jid")), form.text("dependency")
    await job.undepend(dependency)
    return f"{job.jid} no longer waits for {dependency}"


async def flow_cancel(client: AnyClient, form: Form) -> str:
    """Cancel a whole flow: its root (the form's ``jid``) and every job below it, at once;
    refused, nothing cancelled, while a job of it runs."""
    root = form.ruled("jid")
    tree = await client.flows.tree(root)
    if tree is None:
        raise ActionError(f"no job {root!r}")
    if tree.jid != root:
        raise ActionError(f"{root} is not the root of its flow ({tree.jid} is)")
    cancelled = await client.jobs.cancel(root)
    ACTED_ON.set(cancelled)
    return f"Cancelled the flow of {root}: {plural(len(cancelled), 'job')}"


# -- many jobs -------------------------------------------------------------------------------


async def apply(client: AnyClient, verb: str, jids: Sequence[str]) -> str:
    """Retry (put back into its queue) or cancel each job; one refusal does not stop the
    others, and the message says how many were refused and why."""
    done: list[str] = []
    refusals: list[str] = []
    ACTED_ON.set(done)
    if verb not in ("retry", "cancel"):
        raise ActionError(f"unknown bulk action {verb!r}")
    if not jids:
        raise ActionError("no jobs selected")
    for job in await client.jobs.get_many(list(jids)):
        try:
            if verb == "retry":
                await job.move(job.queue_name)
            else:
                await job.cancel()
            done.append(job.jid)
        except AqlessError as error:
            refusals.append(f"{job.jid}: {error}")
    message = f"{'Retried' if verb == 'retry' else 'Cancelled'} {plural(len(done), 'job')}"
    if refusals:
        raise ActionError(f"{message}; {len(refusals)} refused ({'; '.join(refusals[:3])})")
    return message


async def jobs_bulk(client: AnyClient, form: Form) -> str:
    return await apply(client, form.text("action"), form.all("jid"))


async def failed_group(client: AnyClient, form: Form) -> str:
    group = form.text("group")
    await known.require(client, "failure group", group)
    listing = await client.jobs.failed(group, count=BULK_LIMIT)
    return await apply(client, form.text("action"), listing.jids) + f" of {group}"


async def failed_retry_all(client: AnyClient, form: Form) -> str:
    """Every failure group's jobs back into their queues (at most BULK_LIMIT in all)."""
    groups = await client.jobs.failure_groups()
    if not groups:
        raise ActionError("no failed jobs")
    jids: list[str] = []
    for group in groups:
        jids += (await client.jobs.failed(group, count=BULK_LIMIT - len(jids))).jids
        if len(jids) >= BULK_LIMIT:
            break
    return await apply(client, "retry", jids) + f" of {plural(len(groups), 'group')}"


async def search_act(client: AnyClient, form: Form) -> str:
    """Do ``action`` to every job the search of the form's inputs finds now (at most its
    ``limit`` examined), in paced slices (`aqless.ops.bulk`), the progress told under the
    form's ``progress`` id; ``to``: a move's queue."""
    filters = finding.Filters.parse({name: form.all(name) for name in finding.INPUTS})
    if not filters.any:
        raise ActionError("give at least one filter: an action never takes every job")
    limit, _ = finding.limits(form.get("limit"))
    verb = rules.parse("search.action", form.text("action"), finding.COMMAND)
    to = rules.parse("queue", form.text("to"), finding.COMMAND) if verb == "move" else None
    found = await finding.find(client, filters, limit=limit)
    if not found.jids:
        raise ActionError("no job matches the search now: nothing done")
    doing = bulk.plan(verb, found.jids, to)
    ACTED_ON.set(doing.done)  # filled in slice by slice: the entry names what was done
    tally = tallies.start(form.get("progress"), doing.total)
    try:
        await bulk.run(client, doing, found.jids, tally.advance)
    except Exception as error:  # the server went away midway: say how far it got
        tally.finish(f"{doing.outcome()}; stopped: {error}")
        raise
    outcome = doing.outcome()
    tally.finish(outcome)
    outcome = outcome[0].upper() + outcome[1:]
    if doing.refused:
        raise ActionError(outcome)
    return outcome


# -- recurring jobs, throttles, config, patterns, workers ------------------------------------


def cron_schedule(form: Form, template: RecurringJob) -> CronSchedule | None:
    """The form's new cron expression and zone for a cron template, checked; None when the
    form changes neither."""
    if form.get("cron") is None or not template.cron:
        return None
    expression, tz = form.text("cron"), (form.get("tz") or "").strip() or template.tz
    if (expression, tz) == (template.cron, template.tz):
        return None
    try:
        return CronSchedule.of(expression, tz)
    except InvalidArgumentError as error:
        detail = str(error).removeprefix("recur: ")
        raise ActionError(f"The schedule is unchanged: {detail}") from None


async def recurring_update(client: AnyClient, form: Form) -> str:
    template = await a_template(client, form.text("jid"))
    interval = form.recurring("interval")  # none: cron
    backlog = form.recurring("backlog")
    priority, retries = form.recurring("priority"), form.recurring("retries")
    schedule = cron_schedule(form, template)
    policy = {name: form.recurring(name) for name in POLICY_FIELDS}
    await template.update(
        interval=interval, priority=priority, retries=retries, backlog=backlog, **policy
    )
    if schedule is not None:
        await template.update(cron=schedule.expression, tz=schedule.tz)
        return f"Updated {template.jid}: cron {schedule.expression} ({schedule.tz})"
    return f"Updated {template.jid}" + (f": every {interval:g} s" if interval else "")


#: The recurring form's fields of a template's policy (each left as it is when empty).
POLICY_FIELDS: Final = ("overlap", "catchup", "pause_after", "jitter")


def moment(form: Form, name: str) -> datetime.datetime | float:
    """The form's field `name`: a unix time, or an ISO date or time (a datetime-local field
    sends one), read in the template's zone unless it names its own."""
    try:
        return parse_moment(form.text(name))
    except ValueError:
        raise ActionError(f"{name} must be a date and time, or a unix time") from None


async def recurring_backfill(client: AnyClient, form: Form) -> str:
    template = await a_template(client, form.text("jid"))
    made = await template.backfill(moment(form, "start"), moment(form, "end"))
    return f"Backfilled {template.jid}: {plural(made, 'run')} made"


def one_template(verb: Callable[[RecurringJob], Awaitable[object]], done: str) -> Handler:
    """A handler doing `verb` to the recurring job the form names; `done` is said with its
    jid."""

    async def handler(client: AnyClient, form: Form) -> str:
        template = await a_template(client, form.text("jid"))
        await verb(template)
        return done.format(jid=template.jid)

    return handler


async def throttle_set(client: AnyClient, form: Form) -> str:
    name, maximum = form.text("name"), form.ruled("maximum")
    expiration = form.ruled("expiration") if (form.get("expiration") or "").strip() else 0
    await client.throttles[name].set(maximum, expiration=expiration)
    return f"Throttle {name}: at most {maximum}"


async def throttle_delete(client: AnyClient, form: Form) -> str:
    name = form.text("name")
    await client.throttles[name].delete()
    return f"Deleted throttle {name}"


async def config_set(client: AnyClient, form: Form) -> str:
    option, value, force = form.text("option"), form.text("value"), bool(form.get("force"))
    await client.config.set(option, value, force=force)
    return f"Set {option} = {value}"


async def config_unset(client: AnyClient, form: Form) -> str:
    option = form.text("option")
    await client.config.unset(option)
    return f"Reset {option} to its default"


async def identifier_set(client: AnyClient, form: Form) -> str:
    name, patterns = form.text("name"), words(form.text("patterns"))
    identifiers = await client.queue_patterns.identifiers()
    await client.queue_patterns.set_identifiers({**identifiers, name: patterns})
    return f"@{name} = {', '.join(patterns)}"


async def identifier_unset(client: AnyClient, form: Form) -> str:
    name = form.text("name")
    identifiers = await client.queue_patterns.identifiers()
    if identifiers.pop(name, None) is None:
        raise ActionError(f"no identifier {name!r}")
    await client.queue_patterns.set_identifiers(identifiers)
    return f"Forgot @{name}"


async def priorities_set(client: AnyClient, form: Form) -> str:
    lines = (form.get("groups") or "").splitlines()
    groups = [PriorityPattern.parse(line) for line in lines if line.strip()]
    await client.queue_patterns.set_priorities(groups)
    order = await client.queue_patterns.priorities()
    return "Priorities: " + " > ".join(str(group) for group in order)


async def worker_forget(client: AnyClient, form: Form) -> str:
    name = form.text("worker")
    await known.require(client, "worker", name)
    await client.workers.forget(name)
    return f"Forgot worker {name}"


def worker_control(command: str) -> Handler:
    """Ask the live aqless worker named in the form to `command` (quiet, stop, resume)."""

    async def handler(client: AnyClient, form: Form) -> str:
        return await control_worker(client, form.text("worker"), command)

    return handler


HANDLERS: Final[dict[str, Handler]] = {
    "job_retry": one_job(requeue, "Put {jid} back into {queue}"),
    "job_cancel": one_job(Job.cancel, "Cancelled {jid}"),
    "job_track": one_job(Job.track, "Tracking {jid}"),
    "job_untrack": one_job(Job.untrack, "Stopped tracking {jid}"),
    "job_timeout": one_job(Job.timeout, "Took {jid} away from its worker"),
    "recurring_pause": one_template(RecurringJob.pause, "Paused {jid}"),
    "recurring_resume": one_template(RecurringJob.resume, "Resumed {jid}"),
    "recurring_cancel": one_template(RecurringJob.cancel, "Stopped recurring job {jid}"),
    "worker_quiet": worker_control("quiet"),
    "worker_stop": worker_control("stop"),
    "worker_resume": worker_control("resume"),
} | {
    handler.__name__: handler
    for handler in (
        queue_pause,
        queue_unpause,
        queue_throttle,
        group_set,
        queue_empty,
        job_move,
        job_priority,
        job_tag,
        job_untag,
        job_undepend,
        job_signal,
        flow_cancel,
        jobs_bulk,
        failed_group,
        failed_retry_all,
        search_act,
        recurring_update,
        recurring_backfill,
        throttle_set,
        throttle_delete,
        config_set,
        config_unset,
        identifier_set,
        identifier_unset,
        priorities_set,
        worker_forget,
    )
}
