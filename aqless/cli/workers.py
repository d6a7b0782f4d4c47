"""workers: the workers (what they publish of themselves, the jobs they hold), and the jobs
one of them holds; worker quiet/stop/resume: ask a running aqless worker to."""

from __future__ import annotations

import click
from rich.console import RenderableType

import aqless
from aqless.cli.job_view import jobs_table
from aqless.cli.render import ago, fields, moment, table
from aqless.cli.runtime import AnyClient, emit, run_any
from aqless.documents import job_document, seen_worker_document, worker_info_document
from aqless.models import SeenWorker, WorkerCounts, WorkerInfo
from aqless.ops import known
from aqless.ops.control import control_worker, mode_of


def worker_row(seen: SeenWorker) -> tuple[object, ...]:
    counts, info = seen.counts, seen.info
    if info is None:
        known: tuple[object, ...] = ("-",) * 10
    else:
        known = (
            info.host,
            info.pid,
            ", ".join(info.queues),
            info.concurrency,
            info.version,
            moment(info.started),
            ago(info.seen),
            f"{info.per_minute:.1f}",
            info.completed,
            info.mode,
        )
    return (counts.name, *known, counts.jobs, counts.stalled)


COLUMNS = (
    "worker",
    "host",
    "pid#",
    "queues",
    "slots#",
    "version",
    "started",
    "last seen",
    "jobs/min#",
    "completed#",
    "mode",
    "jobs#",
    "stalled#",
)


def info_fields(info: WorkerInfo) -> list[tuple[str, object]]:
    return [
        ("mode", mode_of(info)),
        ("host", info.host),
        ("pid", info.pid),
        ("queues", ", ".join(info.queues)),
        ("slots", info.concurrency),
        ("version", info.version),
        ("started", f"{moment(info.started)} ({ago(info.started)})"),
        ("last seen", ago(info.seen)),
        ("completed", f"{info.completed} ({info.per_minute:.1f}/min), {info.failed} failed"),
    ]


@click.command(short_help="Workers: host, pid, queues, jobs; or one worker's jobs.")
@click.argument("name", required=False)
@click.option(
    "--all",
    "every_client",
    is_flag=True,
    help="Also the clients qless lists that hold nothing and publish no record.",
)
def workers(name: str | None, every_client: bool) -> None:
    """Every worker: what an aqless worker publishes of itself (host, pid, queues, slots,
    version, started, last seen, jobs per minute) and the jobs it holds (and how many of
    them stalled). A worker of another qless client shows what qless knows: its jobs.
    With NAME, that worker and its jobs.

    \b
    Examples:
      aqless workers
      aqless workers --all               also clients that popped but hold nothing
      aqless workers web-1-4242
    """
    if name is None:
        found, others = run_any(lambda client: client.workers.seen())
        if every_client:
            found += [SeenWorker(WorkerCounts(other, 0, 0), None) for other in others]
        view = table(None, COLUMNS, [worker_row(seen) for seen in found])
        emit([seen_worker_document(seen) for seen in found], view)
        return

    async def read(
        client: AnyClient,
    ) -> tuple[WorkerInfo | None, list[aqless.Job], list[aqless.Job]]:
        await known.require(client, "worker", name)
        info = (await client.workers.records()).get(name)
        held = await client.workers.jobs(name)
        return (
            info,
            await client.jobs.get_many(held.jobs),
            await client.jobs.get_many(held.stalled),
        )

    info, running, stalled = run_any(read)
    document = {
        "name": name,
        "info": None if info is None else worker_info_document(info),
        "jobs": [job_document(job) for job in running],
        "stalled": [job_document(job) for job in stalled],
    }
    views: list[RenderableType] = [] if info is None else [fields(info_fields(info))]
    views.append(jobs_table(f"{name}: jobs", running))
    if stalled:
        views.append(jobs_table(f"{name}: stalled", stalled))
    emit(document, *views)


@click.group(short_help="Quiet, stop or resume a running aqless worker.")
def worker() -> None:
    """Ask a running aqless worker (one `aqless workers` lists with a mode) to quiet, stop
    or resume. It reads the request within a second and says what it does in its record
    (the mode column of `aqless workers`). Workers of other qless clients read no request.

    \b
    Examples:
      aqless worker quiet web-1-4242     take no more jobs; the running ones finish
      aqless worker stop web-1-4242      quiet, then exit once they end (or after its grace)
      aqless worker resume web-1-4242    take jobs again after a quiet
    """


def _control_command(command: str, short_help: str, text: str) -> None:
    help_text = f"{text}\n\n\b\nExamples:\n  aqless worker {command} web-1-4242"

    @worker.command(name=command, short_help=short_help, help=help_text)
    @click.argument("name", metavar="NAME")
    def act(name: str) -> None:
        done = run_any(lambda client: control_worker(client, name, command))
        emit({"worker": name, "asked": command}, done)


_control_command(
    "quiet",
    "Take no more jobs; the running ones finish.",
    "Ask the aqless worker NAME to take no more jobs; its running jobs finish. It stays up, "
    "shown as quiet, until `aqless worker resume NAME`.",
)
_control_command(
    "stop",
    "Quiet, then exit once the running jobs end.",
    "Ask the aqless worker NAME to quiet, then exit once its running jobs end; those still "
    "running when its grace (aqless-run --grace) runs out are handed back. aqless-run exits 0.",
)
_control_command(
    "resume",
    "Take jobs again after a quiet.",
    "Ask the aqless worker NAME, quiet or paused, to take jobs again.",
)

COMMANDS = (workers, worker)
