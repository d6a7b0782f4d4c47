"""recurring: list, show, change, backfill, pause, resume and cancel recurring jobs."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import click

import aqless
from aqless import rules
from aqless._concurrency.routing import gathered
from aqless.cli.job_view import recurring_view, recurring_when
from aqless.cli.params import parse_json
from aqless.cli.render import duration, joined, number, short, table
from aqless.cli.runtime import AnyClient, NotFound, emit, run_any
from aqless.documents import recurring_document
from aqless.ops import known
from aqless.ops.listings import recurring_templates
from aqless.ops.params import Ruled, parse_moment


async def require_recurring(client: AnyClient, rjid: str) -> aqless.RecurringJob:
    found = await client.jobs.get(rjid)
    if not isinstance(found, aqless.RecurringJob):
        raise NotFound(f"no recurring job {rjid}")
    return found


async def _recurring(client: AnyClient, queues: tuple[str, ...]) -> list[aqless.RecurringJob]:
    """The recurring jobs of `queues` (every queue when none); a sharded deployment's
    shards are read at once, each for the jobs it holds."""
    shards = await gathered(client.servers, lambda shard: recurring_templates(shard, queues))
    return [job for jobs in shards for job in jobs]


class When(click.ParamType[Any, Any]):
    """A moment typed at the command line: an ISO date or time, or a unix time."""

    name = "time"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value
        try:
            return parse_moment(value)
        except ValueError as error:
            self.fail(str(error), param, ctx)


def _ruled(name: str) -> Ruled:
    """The value of a recurring job's input `name`, checked by its rule (`rules.RECURRING`)."""
    return Ruled(rules.RECURRING[name])


@click.group()
def recurring() -> None:
    """List, change, backfill, pause and cancel recurring jobs.

    \b
    Examples:
      aqless recurring list
      aqless recurring show daily-report
      aqless recurring update daily-report --interval 3600 --priority 5
      aqless recurring update nightly --cron "30 2 * * *" --tz Europe/Paris
      aqless recurring update nightly --overlap skip --pause-after 3
      aqless recurring backfill nightly 2026-03-01 2026-03-08
      aqless recurring pause nightly
      aqless recurring resume nightly
      aqless recurring cancel daily-report
    """


@recurring.command("list")
@click.argument("queues", nargs=-1)
def list_recurring(queues: tuple[str, ...]) -> None:
    """The recurring jobs of QUEUES (default: every queue).

    \b
    Examples:
      aqless recurring list
      aqless recurring list reports emails
    """

    async def read(client: AnyClient) -> list[aqless.RecurringJob]:
        for name in queues:
            await known.require(client, "queue", name)
        return await _recurring(client, queues)

    jobs = run_any(read)
    rows = (
        (
            job.jid,
            job.queue_name,
            job.klass_name,
            recurring_when(job) if job.cron else duration(job.interval),
            number(job.priority),
            job.count,
            joined(job.tags),
            short(job.data, 40),
        )
        for job in jobs
    )
    columns = ("jid", "queue", "class", "when", "priority#", "spawned#", "tags", "data")
    emit([recurring_document(job) for job in jobs], table(None, columns, rows))


@recurring.command(short_help="One recurring job's template.")
@click.argument("rjid")
def show(rjid: str) -> None:
    """One recurring job's template: class, queue, interval, data...

    \b
    Example:
      aqless recurring show daily-report
    """

    async def read(client: AnyClient) -> tuple[aqless.RecurringJob, list[datetime]]:
        job = await require_recurring(client, rjid)
        return job, await job.next_runs(5)

    job, next_runs = run_any(read)
    document = recurring_document(job) | {"next_runs": [at.isoformat() for at in next_runs]}
    emit(document, recurring_view(job, next_runs))


@recurring.command(short_help="Change a recurring job (interval, priority, data).")
@click.argument("rjid")
@click.option("--interval", type=_ruled("interval"), help="Seconds between two spawns.")
@click.option("--cron", help='A cron expression to spawn on instead ("*/5 * * * *").')
@click.option("--tz", help="The cron expression's time zone (Europe/Paris).")
@click.option("--priority", type=_ruled("priority"), help="The spawned jobs' priority.")
@click.option("--retries", type=_ruled("retries"), help="The spawned jobs' retries.")
@click.option(
    "--backlog", type=_ruled("backlog"), help="How many missed spawns to catch up at most."
)
@click.option("--data", callback=parse_json, help="The spawned jobs' data (JSON).")
@click.option("--klass", help="The spawned jobs' class.")
@click.option("--queue", type=_ruled("queue"), help="Spawn into this queue instead.")
@click.option(
    "--overlap", type=_ruled("overlap"), help="What a due run does while the last one is live."
)
@click.option(
    "--catchup", type=_ruled("catchup"), help="Seconds a missed run may be late (0: any)."
)
@click.option(
    "--pause-after",
    "pause_after",
    type=_ruled("pause_after"),
    help="Failed runs in a row that pause it (0: never).",
)
@click.option("--jitter", type=_ruled("jitter"), help="Seconds a run may start after its time.")
def update(rjid: str, **changes: Any) -> None:
    """Change a recurring job; the jobs it spawns from now on follow.

    \b
    \b
    Examples:
      aqless recurring update daily-report --interval 3600 --data '{"full": true}'
      aqless recurring update nightly --overlap skip --pause-after 3 --jitter 30
    """
    given = {name: value for name, value in changes.items() if value is not None}
    if not given:
        raise click.UsageError("nothing to change: give at least one option")

    async def act(client: AnyClient) -> aqless.RecurringJob:
        job = await require_recurring(client, rjid)
        await job.update(**given)
        return job

    job = run_any(act)
    emit(recurring_document(job), recurring_view(job))


@recurring.command(short_help="Make a past range's runs, each once.")
@click.argument("rjid")
@click.argument("start", type=When())
@click.argument("end", type=When())
def backfill(rjid: str, start: datetime | float, end: datetime | float) -> None:
    """Make the runs RJID would have made from START up to (not including) END, each time
    once however often it is backfilled. START and END: ISO dates or times (in the
    template's time zone unless they name theirs) or unix times.

    \b
    Examples:
      aqless recurring backfill nightly 2026-03-01 2026-03-08
      aqless recurring backfill ping 2026-03-02T09:00 2026-03-02T12:00
    """

    async def act(client: AnyClient) -> int:
        return await (await require_recurring(client, rjid)).backfill(start, end)

    made = run_any(act)
    emit({"backfilled": rjid, "runs": made}, f"made {made} runs of {rjid}")


def _template_verb(rjid: str, verb: str, done: str) -> None:
    """Does `verb` (a RecurringJob coroutine's name) to recurring job `rjid`; says `done`."""

    async def act(client: AnyClient) -> None:
        await getattr(await require_recurring(client, rjid), verb)()

    run_any(act)
    emit({done: rjid}, f"{done} recurring job {rjid}")


@recurring.command(short_help="Stop making runs until resumed.")
@click.argument("rjid")
def pause(rjid: str) -> None:
    """Stop making runs of RJID until `aqless recurring resume` (its due runs are dropped).

    \b
    Example:
      aqless recurring pause nightly
    """
    _template_verb(rjid, "pause", "paused")


@recurring.command(short_help="Make runs again after a pause.")
@click.argument("rjid")
def resume(rjid: str) -> None:
    """Make runs of RJID again, after a pause or failures in a row (their count starts over).

    \b
    Example:
      aqless recurring resume nightly
    """
    _template_verb(rjid, "resume", "resumed")


@recurring.command("cancel")
@click.argument("rjid")
def cancel_recurring(rjid: str) -> None:
    """Stop spawning; the jobs already spawned stay.

    \b
    Example:
      aqless recurring cancel daily-report
    """
    _template_verb(rjid, "cancel", "cancelled")


COMMANDS = (recurring,)
