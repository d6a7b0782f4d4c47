"""workers: the workers the server has seen, and the jobs one of them holds."""

from __future__ import annotations

import click

import aqless
from aqless.cli.job_view import jobs_table
from aqless.cli.render import table
from aqless.cli.runtime import AnyClient, NotFound, emit, run_any
from aqless.documents import job_document, worker_document


@click.command(short_help="Workers and their job counts; or one worker's jobs.")
@click.argument("name", required=False)
def workers(name: str | None) -> None:
    """Every worker with how many jobs it holds (and how many stalled); with NAME, its jobs.

    \b
    Examples:
      aqless workers
      aqless workers web-1-4242
    """
    if name is None:
        counts = run_any(lambda client: client.workers.counts())
        rows = [(worker.name, worker.jobs, worker.stalled) for worker in counts]
        view = table(None, ("worker", "jobs#", "stalled#"), rows)
        emit([worker_document(worker) for worker in counts], view)
        return

    async def read(client: AnyClient) -> tuple[list[aqless.Job], list[aqless.Job]]:
        known = {worker.name for worker in await client.workers.counts()}
        if name not in known:
            raise NotFound(f"no worker {name!r}")
        held = await client.workers.jobs(name)
        return (
            await client.jobs.get_many(held.jobs),
            await client.jobs.get_many(held.stalled),
        )

    running, stalled = run_any(read)
    document = {
        "name": name,
        "jobs": [job_document(job) for job in running],
        "stalled": [job_document(job) for job in stalled],
    }
    views = [jobs_table(f"{name}: jobs", running)]
    if stalled:
        views.append(jobs_table(f"{name}: stalled", stalled))
    emit(document, *views)


COMMANDS = (workers,)
