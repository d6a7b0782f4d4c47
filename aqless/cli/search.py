"""search: find jobs over every queue and state (`aqless.ops.search`, as the dashboard's
search page), and act on every job found (`aqless.ops.bulk`), after a confirmation, with a
progress bar and an audit entry naming the jobs changed."""

from __future__ import annotations

from typing import Any

import click
from rich.console import Group
from rich.text import Text

from aqless.cli.job_view import jobs_table
from aqless.cli.runtime import AnyClient, emit, note, progress, run_any
from aqless.documents import job_document
from aqless.ops import audit, bulk
from aqless.ops import search as finding
from aqless.ops.durations import plural


def _cost(found: finding.Found) -> str:
    cost = found.cost()
    text = (
        f"{plural(len(found.jids), 'match')} in {found.examined} jobs examined of "
        f"{found.listed} listed; server cost: {cost['jobs_read']} job reads in "
        f"{cost['round_trips']} round trips, {cost['data_bytes']} bytes of data and results, "
        f"{cost['milliseconds']} ms"
    )
    if not found.complete:
        text += f" (not every job was examined: the search stopped at {found.limit})"
    return text


def chosen_verb(flags: dict[str, bool], move: str | None) -> str | None:
    chosen = [verb for verb, given in flags.items() if given] + (["move"] if move else [])
    if len(chosen) > 1:
        raise click.UsageError("give one action: " + ", ".join(sorted(chosen)))
    return chosen[0] if chosen else None


async def _recorded(
    client: AnyClient, filters: finding.Filters, done: bulk.Bulk, outcome: str
) -> None:
    given = {
        k: v if isinstance(v, str) else ", ".join(v) for k, v in filters.document().items() if v
    }
    detail: dict[str, str] = {
        **given,
        "action": done.verb,
        "count": str(len(done.done)),
        "jids": ", ".join(done.done),
    }
    if done.queue:
        detail["to"] = done.queue
    entry = audit.entry(audit.operator(), "cli", "search", (), detail, outcome)
    await audit.record(client, entry, length=audit.length_from_environment())


@click.command(short_help="Find jobs in every queue and state; act on all of them.")
@click.option("--class", "klass", metavar="CLASS", help="Jobs of this class.")
@click.option("--tag", help="Jobs with this tag.")
@click.option("--group", help="Failed jobs of this failure group.")
@click.option("--worker", help="Jobs this worker holds (or last held).")
@click.option("--queue", help="Jobs of this queue (a completed job is in none).")
@click.option("--jid", help="The job of this id.")
@click.option(
    "--state",
    "states",
    multiple=True,
    metavar="STATE",
    help=f"Jobs in STATE: {', '.join(finding.STATES)} (repeat it, or separate with commas; "
    "default: every state).",
)
@click.option("--where", metavar="'PATH = VALUE'", help="Jobs whose data holds VALUE at PATH.")
@click.option("--result", metavar="'PATH = VALUE'", help="Jobs whose result holds VALUE at PATH.")
@click.option(
    "--limit",
    metavar="N",
    help=f"Examine at most N jobs (default {finding.LIMIT_DEFAULT}, at most {finding.LIMIT_MAX}).",
)
@click.option(
    "--shown", metavar="N", help=f"List at most N found jobs (default {finding.SHOWN_DEFAULT})."
)
@click.option("--cancel", is_flag=True, help="Cancel the jobs found (not the completed ones).")
@click.option("--retry", is_flag=True, help="Put the failed jobs found back into their queue.")
@click.option("--requeue", is_flag=True, help="Put the jobs found back into their queue.")
@click.option("--move", metavar="QUEUE", help="Put the jobs found into QUEUE.")
@click.option("--delete", is_flag=True, help="Delete the jobs found, whatever their state.")
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
def search(
    klass: str | None,
    tag: str | None,
    group: str | None,
    worker: str | None,
    queue: str | None,
    jid: str | None,
    states: tuple[str, ...],
    where: str | None,
    result: str | None,
    limit: str | None,
    shown: str | None,
    cancel: bool,
    retry: bool,
    requeue: bool,
    move: str | None,
    delete: bool,
    yes: bool,
) -> None:
    """Find jobs over every queue and every state (failed and completed ones too) by class,
    tag, failure group, worker, queue, jid, a field of their data (--where 'user.id = 42')
    or of their result (--result 'sent = true'; '= 42' for the whole result); every filter
    given must hold. The search examines at most --limit jobs, read from the indexes the
    server keeps (a tag's jobs, a failure group's, else every queue's chosen states), and
    says what it cost. The dashboard's search page runs the same search.

    With an action (--cancel, --retry, --requeue, --move QUEUE, --delete), every job found
    (not only those listed) is changed, in slices that never hold the server more than a
    few milliseconds, after you confirm the count (--yes does not ask; without a terminal,
    --yes is needed); the audit log names every job changed.

    \b
    Examples:
      aqless search --class app.SendEmail --state failed
      aqless search --tag vip --where 'user.plan = "pro"'
      aqless search --result 'sent = false' --state complete --json
      aqless search --group billing-TimeoutError --retry --yes
      aqless search --queue old --state waiting --move new
    """
    verb = chosen_verb(
        {"cancel": cancel, "retry": retry, "requeue": requeue, "delete": delete}, move
    )
    given = {
        "class": [klass or ""],
        "tag": [tag or ""],
        "group": [group or ""],
        "worker": [worker or ""],
        "queue": [queue or ""],
        "jid": [jid or ""],
        "state": list(states),
        "where": [where or ""],
        "result": [result or ""],
    }
    filters = finding.Filters.parse(given)
    examined, listed = finding.limits(limit, shown)
    if verb is not None and not filters.any:
        raise click.UsageError("give at least one filter: an action never takes every job")
    if verb == "move":
        bulk.check_move(move)

    async def look(client: AnyClient) -> tuple[finding.Found, list[Any]]:
        await finding.require_known(client, filters)
        found = await finding.find(client, filters, limit=examined)
        return found, await client.jobs.get_many(found.jids[:listed])

    found, jobs = run_any(look)
    document: dict[str, Any] = {**found.document(listed), "jobs": [job_document(j) for j in jobs]}
    if verb is None:
        title = f"{plural(len(found.jids), 'job')} found"
        emit(document, Group(jobs_table(title, jobs), Text(_cost(found), style="dim")))
        return
    note(_cost(found))
    if not found.jids:
        emit({**document, "action": bulk.Bulk(verb, 0, move).document()}, "no job found")
        return
    asked = bulk.Bulk(verb, len(found.jids), move)
    if not yes:
        click.confirm(asked.question(), abort=True, err=True)

    async def act(client: AnyClient) -> bulk.Bulk:
        with progress(verb, len(found.jids)) as advance:
            done = await bulk.act(client, verb, found.jids, queue=move, advance=advance)
        await _recorded(client, filters, done, "ok" if not done.refused else done.outcome())
        return done

    done = run_any(act)
    for refused, why in list(done.refused.items())[:20]:
        note(f"refused {refused}: {why}")
    emit({**document, "action": done.document()}, done.outcome())


COMMANDS = (search,)
