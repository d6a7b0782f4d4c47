"""Commands on jobs by jid: get, priority, track/untrack, tag/untag."""

from __future__ import annotations

from collections.abc import Sequence

import click

import aqless
from aqless.cli.job_view import job_view, jobs_table, recurring_view
from aqless.cli.runtime import AnyClient, NotFound, emit, run_any
from aqless.documents import Document, job_details, job_document, recurring_document


async def require(client: AnyClient, jid: str) -> aqless.Job | aqless.RecurringJob:
    found = await client.jobs.get(jid)
    if found is None:
        raise NotFound(f"no job {jid}")
    return found


async def require_jobs(client: AnyClient, jids: Sequence[str]) -> list[aqless.Job]:
    """The jobs, in order; NotFound naming every missing jid (before anything changes)."""
    jobs = await client.jobs.get_many(list(dict.fromkeys(jids)))
    missing = sorted(set(jids) - {job.jid for job in jobs})
    if missing:
        raise NotFound(f"no job {', '.join(missing)}")
    return jobs


@click.command(short_help="Show a job: fields, progress, data, result, history.")
@click.argument("jid")
def get(jid: str) -> None:
    """Show a job: its fields, progress, data, result, history and failure.

    Recurring jobs show their template. With --json, the job as the server's `job.get`
    names its fields; `progress`: its last progress report (null when none); and
    `result`: its kept return value (`value`) or why it was not kept (`dropped`), or null.

    \b
    Example:
      aqless get 3f2a9c...
    """
    job, details = run_any(lambda client: _with_details(client, jid))
    if isinstance(job, aqless.RecurringJob):
        emit(recurring_document(job), recurring_view(job))
    else:
        emit(details, job_view(job, details))


async def _with_details(
    client: AnyClient, jid: str
) -> tuple[aqless.Job | aqless.RecurringJob, Document]:
    job = await require(client, jid)
    return job, (await job_details(job.client, job) if isinstance(job, aqless.Job) else {})


@click.command(short_help="Set a job's priority (higher runs earlier).")
@click.argument("jid")
@click.argument("priority", type=float)
def priority(jid: str, priority: float) -> None:
    """Set a job's priority (higher runs earlier); recurring jobs too.

    \b
    Example:
      aqless priority 3f2a9c... 10
    """

    async def change(client: AnyClient) -> None:
        job = await require(client, jid)
        if isinstance(job, aqless.RecurringJob):
            await job.update(priority=priority)
        else:
            await job.set_priority(priority)

    run_any(change)
    emit({"jid": jid, "priority": priority}, f"{jid}: priority {priority:g}")


@click.command(short_help="Track jobs; with no JID, list the tracked ones.")
@click.argument("jids", nargs=-1)
def track(jids: tuple[str, ...]) -> None:
    """Track jobs (their events go to the tracking channels); no JID lists tracked jobs.

    \b
    Examples:
      aqless track 3f2a9c... 77b1e0...
      aqless track                  the tracked jobs
    """
    if not jids:
        tracked, expired = run_any(lambda client: client.jobs.tracked())
        document = {"jobs": [job_document(job) for job in tracked], "expired": expired}
        emit(document, jobs_table("tracked jobs", tracked))
        return

    async def change(client: AnyClient) -> None:
        for job in await require_jobs(client, jids):
            await job.track()

    run_any(change)
    emit({"tracked": list(jids)}, *(f"tracking {jid}" for jid in jids))


@click.command()
@click.argument("jids", nargs=-1, required=True)
def untrack(jids: tuple[str, ...]) -> None:
    """Stop tracking jobs.

    \b
    Example:
      aqless untrack 3f2a9c...
    """

    async def change(client: AnyClient) -> None:
        for job in await require_jobs(client, jids):
            await job.untrack()

    run_any(change)
    emit({"untracked": list(jids)}, *(f"not tracking {jid}" for jid in jids))


def _tagging(add: bool, jid: str, tags: tuple[str, ...]) -> None:
    async def change(client: AnyClient) -> tuple[str, ...]:
        job = await require(client, jid)
        return await (job.tag(*tags) if add else job.untag(*tags))

    now = run_any(change)
    emit({"jid": jid, "tags": list(now)}, f"{jid}: tags {', '.join(now) or '(none)'}")


@click.command()
@click.argument("jid")
@click.argument("tags", nargs=-1, required=True)
def tag(jid: str, tags: tuple[str, ...]) -> None:
    """Add tags to a job (or a recurring job); prints its tags.

    \b
    Example:
      aqless tag 3f2a9c... vip urgent
    """
    _tagging(True, jid, tags)


@click.command(short_help="Remove tags from a job (or a recurring job).")
@click.argument("jid")
@click.argument("tags", nargs=-1, required=True)
def untag(jid: str, tags: tuple[str, ...]) -> None:
    """Remove tags from a job (or a recurring job); prints the tags left.

    \b
    Example:
      aqless untag 3f2a9c... urgent
    """
    _tagging(False, jid, tags)


COMMANDS = (get, priority, track, untrack, tag, untag)
