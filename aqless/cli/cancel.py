"""cancel: delete jobs by jid, or a whole failure group."""

from __future__ import annotations

import click

from aqless.cli.failures import PAGE, group_jids
from aqless.cli.jobs import require_jobs
from aqless.cli.render import plural
from aqless.cli.runtime import AnyClient, chunks, emit, progress, run_any


@click.command()
@click.argument("jids", nargs=-1)
@click.option("--group", help="Cancel every job failed in this group.")
def cancel(jids: tuple[str, ...], group: str | None) -> None:
    """Cancel jobs: the given jids, or every failed job of --group.

    Every jid must exist, or nothing is cancelled (exit 1). The server refuses to cancel a
    job that others depend on unless they are cancelled with it (exit 3). A job of a flow
    takes every job below it along (they are listed too) and leaves its parent, which
    stops waiting for it; while a job it would remove runs, it is refused (exit 3). Bulk
    cancellation draws a progress bar on a terminal.

    \b
    Examples:
      aqless cancel 3f2a9c... 77b1e0...
      aqless cancel --group TimeoutError
    """
    if not jids and group is None:
        raise click.UsageError("give the jids to cancel, or --group")
    if jids and group is not None:
        raise click.UsageError("give jids or --group, not both")

    async def act(client: AnyClient) -> list[str]:
        if group is not None:
            targets = await group_jids(client, group)
        else:
            targets = [job.jid for job in await require_jobs(client, jids)]
        cancelled: list[str] = []
        with progress("cancelling", len(targets)) as advance:
            for chunk in chunks(targets, PAGE):
                cancelled += await client.jobs.cancel(*chunk)
                advance(len(chunk))
        return list(dict.fromkeys(cancelled))  # a flow's job named after its parent

    cancelled = run_any(act)
    emit({"cancelled": cancelled}, f"cancelled {plural(len(cancelled), 'job')}")


COMMANDS = (cancel,)
