"""Queues: every queue's counts, what a queue would hand out next, a day's statistics,
pausing."""

from __future__ import annotations

import datetime

import click
from rich.console import Group, RenderableType

import aqless
from aqless.cli.histogram import histogram_chart
from aqless.cli.job_view import jobs_table
from aqless.cli.render import fields, table
from aqless.cli.runtime import AnyClient, emit, note, run_any
from aqless.cli.scaling_view import read_scaling, scaling_table
from aqless.documents import counts_document, job_document, stats_document
from aqless.ops import known
from aqless.ops.classes import ClassFigures, class_figures
from aqless.ops.durations import duration
from aqless.ops.params import Ruled
from aqless.rules import RULES

STATES = ("waiting", "running", "stalled", "scheduled", "depends", "throttled", "recurring")

#: What `aqless jobs` lists: a queue listing's states (aqless.rules' `state`), the queue's
#: failed jobs and every queue's completed ones.
LISTED = (*RULES["state"].choices, "failed", "complete")


@click.command(short_help="Every queue's job counts by state.")
def queues() -> None:
    """Every queue with how many jobs it holds in each state, and whether it is paused.

    \b
    Examples:
      aqless queues
      aqless --json queues | jq '.[] | select(.waiting > 100) | .name'
    """
    counts = run_any(lambda client: client.queues.counts())
    rows = [
        (c.name, *(getattr(c, state) for state in STATES), "paused" if c.paused else "")
        for c in counts
    ]
    if len(rows) > 1:
        totals = [sum(getattr(c, state) for c in counts) for state in STATES]
        rows.append(("(all)", *totals, ""))
    columns = ("queue", *(f"{state}#" for state in STATES), "")
    emit([counts_document(c) for c in counts], table(None, columns, rows))


@click.command()
@click.argument("queue")
@click.option(
    "-n", "--count", type=Ruled("count"), default=10, show_default=True, help="How many jobs."
)
def peek(queue: str, count: int) -> None:
    """The jobs QUEUE would hand out next, without taking them.

    \b
    Example:
      aqless peek emails -n 20
    """

    async def read(client: AnyClient) -> list[aqless.Job]:
        await known.require(client, "queue", queue)
        return await client.queues[queue].peek(count)

    jobs = run_any(read)
    emit([job_document(job) for job in jobs], jobs_table(f"next in {queue}", jobs))


@click.command(short_help="A queue's jobs in one state, a page at a time.")
@click.argument("queue")
@click.argument("state", type=click.Choice(LISTED))
@click.option(
    "-n", "--count", type=Ruled("count"), default=25, show_default=True, help="How many jobs."
)
@click.option("--offset", type=Ruled("offset"), default=0, show_default=True, help="Jobs to skip.")
def jobs(queue: str, state: str, count: int, offset: int) -> None:
    """QUEUE's jobs in STATE, a page at a time: waiting (in the order pops take them,
    none taken), running, stalled, scheduled, depends, throttled, failed (group by group),
    complete (every queue's completed jobs) or recurring (its recurring jobs' ids). On a
    sharded deployment, the shards' lists interleaved.

    \b
    Examples:
      aqless jobs emails waiting
      aqless jobs emails scheduled -n 100 --offset 100
      aqless jobs emails failed
    """

    async def read(client: AnyClient) -> tuple[list[str], list[aqless.Job]]:
        await known.require(client, "queue", queue)
        jids = await client.queues[queue].jobs(state, offset=offset, count=count)
        return jids, await client.jobs.get_many(jids)

    jids, found = run_any(read)
    document = {"queue": queue, "state": state, "jids": jids}
    if state == "recurring":
        emit(document, table(f"{queue}: recurring", ("jid",), [(jid,) for jid in jids]))
    else:
        emit(document, jobs_table(f"{queue}: {state}", found))


async def _class_figures(client: AnyClient, queue: str | None) -> list[ClassFigures]:
    if queue is not None:
        await known.require(client, "queue", queue)
    return await class_figures(client, None if queue is None else [queue])


def _seconds(value: float | None) -> str:
    return "-" if value is None else duration(value)


def class_table(figures: list[ClassFigures]) -> RenderableType:
    """Each class's figures, its hour then its day (run times are upper bounds)."""
    rows = [
        (
            figure.queue,
            figure.klass,
            figure.window,
            figure.completed,
            figure.failed,
            "-" if figure.failure_rate is None else f"{figure.failure_rate:.1%}",
            f"{figure.per_minute:.2f}",
            _seconds(figure.p50),
            _seconds(figure.p95),
            _seconds(figure.p99),
        )
        for figure in figures
    ]
    columns = ("queue", "class", "over", "completed#", "failed#", "failure rate#",
               "jobs/min#", "p50 ≤#", "p95 ≤#", "p99 ≤#")  # fmt: skip
    return table(None, columns, rows) if rows else "no job completed or failed in the last day"


def _day(value: datetime.datetime | None) -> datetime.date | None:
    return None if value is None else value.date()


@click.command(short_help="A queue's wait/run times and failures for a day; --scaling.")
@click.argument("queue", required=False)
@click.option(
    "--date",
    type=click.DateTime(formats=["%Y-%m-%d"]),
    help="The day (YYYY-MM-DD, UTC); default today.",
)
@click.option(
    "--scaling",
    is_flag=True,
    help="Instead: the queue's (every queue's, without QUEUE) scaling signals and the "
    "worker slots that would keep the p95 wait under --target.",
)
@click.option(
    "--target",
    type=float,
    default=2.0,
    show_default=True,
    help="With --scaling: the p95 wait to meet, in seconds.",
)
@click.option(
    "--sample",
    type=float,
    default=0.0,
    show_default=True,
    help="With --scaling: read twice, this many seconds apart, and take the throughput "
    "between the two readings (0: over the day so far).",
)
@click.option(
    "--by-class",
    is_flag=True,
    help="Instead: each job class's run time p50/p95/p99, failure rate and throughput in "
    "QUEUE (every queue without it), over this hour and over the last day.",
)
def stats(
    queue: str | None,
    date: datetime.datetime | None,
    scaling: bool,
    target: float,
    sample: float,
    by_class: bool,
) -> None:
    """A queue's statistics for one day: wait and run times with their histograms, and
    its failure and retry counts. With --scaling, the scaling signals instead: waiting
    jobs, the oldest wait, the day's wait p50/p95, the throughput, and the worker slots an
    M/M/c model says keep the p95 wait under --target seconds.

    \b
    Examples:
      aqless stats emails
      aqless stats emails --date 2024-05-01
      aqless stats --scaling --target 0.5 --sample 30
      aqless --json stats emails --scaling | jq .slots
      aqless stats --by-class
      aqless --json stats emails --by-class
    """
    if by_class:
        if date is not None or scaling:
            raise click.UsageError("--by-class reads the last day: no --date, no --scaling")
        figures = run_any(lambda client: _class_figures(client, queue))
        emit([figure.document() for figure in figures], class_table(figures))
        return
    if scaling:
        if date is not None:
            raise click.UsageError("--scaling reads today: it takes no --date")
        target = RULES["target_p95"].check(target, "--target", "stats")
        sample = RULES["sample"].check(sample, "--sample", "stats")
        readings = run_any(lambda client: read_scaling(client, queue, target, sample))
        documents = [reading.as_dict() for reading in readings]
        emit(documents[0] if queue is not None else documents, scaling_table(target, readings))
        return
    if queue is None:
        raise click.UsageError("give a QUEUE (or --scaling for every queue)")
    day = _day(date)
    named = queue

    async def read(client: AnyClient) -> aqless.QueueStats:
        await known.require(client, "queue", named)
        return await client.queues[named].stats(day)

    result = run_any(read)
    counters = fields(
        [("failed", result.failed), ("failures", result.failures), ("retries", result.retries)]
    )
    view = Group(
        histogram_chart("wait", result.wait), "", histogram_chart("run", result.run), "", counters
    )
    emit({"queue": queue, **stats_document(result)}, view)


@click.command()
@click.argument("queues", nargs=-1, required=True)
@click.option(
    "--stop-jobs",
    is_flag=True,
    help="Also time out the queues' running jobs: their workers lose them, and they wait "
    "for the queue to be unpaused.",
)
def pause(queues: tuple[str, ...], stop_jobs: bool) -> None:
    """Stop queues from handing out jobs (put and peek still work).

    A queue the server has never seen (no job was ever put in it: a typo?) is paused all
    the same, so that it can be paused before its first job, with a warning on stderr
    naming the closest known queues (and, with --json, its name under `unseen`).

    \b
    Examples:
      aqless pause emails reports
      aqless pause emails --stop-jobs
    """

    async def act(client: AnyClient) -> tuple[list[str], dict[str, list[str]]]:
        unseen = await warned_unseen(client, queues, "paused all the same")
        paused = {name: await client.queues[name].pause(stopjobs=stop_jobs) for name in queues}
        return unseen, paused

    unseen, timed_out = run_any(act)
    document: dict[str, object] = {"paused": list(queues), "unseen": unseen}
    if stop_jobs:
        document["timed_out"] = timed_out
    lines = [
        f"paused {name}" + (f"; timed out {len(jids)} running jobs" if stop_jobs else "")
        for name, jids in timed_out.items()
    ]
    emit(document, *lines)


@click.command(short_help="Let paused queues hand out jobs again.")
@click.argument("queues", nargs=-1, required=True)
def unpause(queues: tuple[str, ...]) -> None:
    """Let paused queues hand out jobs again (a queue never seen: as for `pause`).

    \b
    Example:
      aqless unpause emails
    """

    async def act(client: AnyClient) -> list[str]:
        unseen = await warned_unseen(client, queues, "unpaused all the same")
        for name in queues:
            await client.queues[name].unpause()
        return unseen

    unseen = run_any(act)
    document = {"unpaused": list(queues), "unseen": unseen}
    emit(document, *(f"unpaused {name}" for name in queues))


async def warned_unseen(client: AnyClient, queues: tuple[str, ...], done: str) -> list[str]:
    """The queues among `queues` that the server has never seen, each warned of on stderr
    with the closest known queues."""
    unseen = await known.unseen(client, "queue", queues)
    if unseen:
        names = await known.names(client, "queue")
        for name in unseen:
            missing = known.UnknownNameError("queue", name, known.closest(name, names))
            note(f"warning: {missing}: no job was ever put in it; {done}")
    return unseen


COMMANDS = (queues, peek, jobs, stats, pause, unpause)
