"""Failed jobs: the groups, a group's jobs, and putting them back (retry/unfail)."""

from __future__ import annotations

import click

import aqless
from aqless.cli.jobs import require_jobs
from aqless.cli.render import ago, plural, short, table
from aqless.cli.runtime import AnyClient, NotFound, chunks, emit, progress, run_any
from aqless.documents import job_document
from aqless.ops import known
from aqless.ops.params import Ruled

PAGE = 500


async def group_jids(client: AnyClient, group: str, limit: int | None = None) -> list[str]:
    """The jids failed in `group` (at most `limit`), most recent first; UnknownNameError
    (or NotFound) if none."""
    await known.require(client, "failure group", group)
    jids: list[str] = []
    while limit is None or len(jids) < limit:
        count = PAGE if limit is None else min(PAGE, limit - len(jids))
        page = await client.jobs.failed(group, offset=len(jids), count=count)
        jids.extend(page.jids)
        if not page.jids or len(jids) >= page.total:
            break
    if not jids:
        raise NotFound(f"no failed jobs in group {group!r}")
    return jids


def last_line(message: str) -> str:
    """A traceback's last line names the exception: the most telling line of a message."""
    lines = [line for line in message.splitlines() if line.strip()]
    return lines[-1] if lines else ""


@click.command(short_help="Failure groups with counts; or one group's jobs.")
@click.argument("group", required=False)
@click.option(
    "-n", "--count", type=Ruled("count"), default=25, show_default=True, help="Jobs to show."
)
@click.option(
    "--offset",
    type=Ruled("offset"),
    default=0,
    show_default=True,
    help="Jobs to skip (most recent first).",
)
def failed(group: str | None, count: int, offset: int) -> None:
    """List the failure groups with their counts; with GROUP, its jobs.

    \b
    Examples:
      aqless failed
      aqless failed TimeoutError -n 100
    """
    if group is None:
        groups = run_any(lambda client: client.jobs.failure_groups())
        ranked = sorted(groups.items(), key=lambda item: (-item[1], item[0]))
        emit(groups, table("failure groups", ("group", "jobs#"), ranked))
        return

    async def read(client: AnyClient) -> tuple[int, list[aqless.Job]]:
        await known.require(client, "failure group", group)
        page = await client.jobs.failed(group, offset=offset, count=count)
        if page.total == 0:
            raise NotFound(f"no failed jobs in group {group!r}")
        return page.total, await client.jobs.get_many(page.jids)

    total, jobs = run_any(read)
    rows = (
        (
            job.jid,
            job.klass_name,
            job.queue_name,
            ago(job.failure.when) if job.failure else "-",
            short(last_line(job.failure.message) if job.failure else "", 60),
        )
        for job in jobs
    )
    title = f"{group}: {len(jobs)} of {total} failed jobs"
    document = {"group": group, "total": total, "jobs": [job_document(job) for job in jobs]}
    emit(document, table(title, ("jid", "class", "queue", "failed", "message"), rows))


async def _requeue(client: AnyClient, jids: list[str], queue: str | None) -> int:
    """Put failed jobs back into their queue (or `queue`); jobs that are no longer failed,
    or gone, are left alone. Returns how many moved."""
    moved = 0
    with progress("retrying", len(jids)) as advance:
        for chunk in chunks(jids, PAGE):
            for job in await client.jobs.get_many(chunk):
                if job.state == aqless.JobState.FAILED:
                    await job.move(queue or job.queue_name)
                    moved += 1
            advance(len(chunk))
    return moved


async def _unfail(client: aqless.Client, group: str, queue: str, limit: int | None) -> int:
    """The server's bulk unfail: a group's oldest failed jobs into one queue."""
    total = len(await group_jids(client, group, limit))
    moved = 0
    with progress(f"unfailing into {queue}", total) as advance:
        while moved < total:
            step = await client.queues[queue].unfail(group, min(PAGE, total - moved))
            if step == 0:
                break
            moved += step
            advance(step)
    return moved


async def _retry_group(client: AnyClient, group: str, queue: str | None, limit: int | None) -> int:
    if queue is not None and isinstance(client, aqless.Client):
        return await _unfail(client, group, queue, limit)
    # a sharded deployment moves each job (its queue is on every shard)
    return await _requeue(client, await group_jids(client, group, limit), queue)


@click.command(short_help="Requeue failed jobs: a group's, every group's, or given jids.")
@click.argument("targets", nargs=-1, metavar="GROUP | JID...")
@click.option("--all", "every_group", is_flag=True, help="Every failure group's jobs.")
@click.option(
    "--queue",
    type=Ruled("queue"),
    help="Put the jobs into this queue instead of each one's own.",
)
@click.option("-n", "--count", type=Ruled("count"), help="At most this many of each group's jobs.")
def retry(
    targets: tuple[str, ...], every_group: bool, queue: str | None, count: int | None
) -> None:
    """Put failed jobs back to work: a failure group's, every group's (--all), or the
    given jids.

    One argument that names a failure group takes its jobs; otherwise the arguments are
    jids. An unknown name exits 1, naming what was not found (a group, or jids). Each job
    goes back to its own queue, or to --queue. `unfail` is the same command (qless's
    name). A progress bar is drawn on a terminal.

    \b
    Examples:
      aqless retry TimeoutError               every job of the group
      aqless retry TimeoutError --count 100 --queue slow
      aqless retry --all                      every failed job
      aqless retry 3f2a9c... 77b1e0...
    """
    if every_group == bool(targets):
        raise click.UsageError("give a GROUP, JIDs or --all (and not both)")
    if every_group:

        async def retry_all(client: AnyClient) -> dict[str, int]:
            groups = await client.jobs.failure_groups()
            return {group: await _retry_group(client, group, queue, count) for group in groups}

        retried = run_any(retry_all)
        total = sum(retried.values())
        text = f"retried {plural(total, 'job')} of {plural(len(retried), 'group')}"
        emit({"groups": retried, "retried": total}, text)
        return

    async def act(client: AnyClient) -> tuple[str, int]:
        groups = await client.jobs.failure_groups()
        if len(targets) == 1 and targets[0] in groups:
            group = targets[0]
            return group, await _retry_group(client, group, queue, count)
        if len(targets) == 1 and not await client.jobs.get_many(targets):
            missing = known.UnknownNameError(
                "failure group", targets[0], known.closest(targets[0], groups)
            )
            raise NotFound(f"{missing}, and no job with that jid")
        jids = [job.jid for job in await require_jobs(client, targets)]  # all exist, or none moves
        return "", await _requeue(client, jids, queue)

    group, moved = run_any(act)
    document = {"group": group or None, "retried": moved}
    emit(document, f"retried {plural(moved, 'job')}")


COMMANDS = (failed, retry)
