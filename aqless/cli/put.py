"""put: one job from the command line, or many from a JSON-lines file."""

from __future__ import annotations

import datetime
import json
from collections.abc import Awaitable, Callable, Iterable
from typing import IO, Any

import click

import aqless
from aqless.cli.params import aware_time, names, parse_json, parse_time
from aqless.cli.render import plural
from aqless.cli.runtime import AnyClient, chunks, emit, progress, run_any, settings

BATCH = 1000
LINE_FIELDS = (
    "klass",
    "data",
    "jid",
    "priority",
    "delay",
    "at",
    "tags",
    "retries",
    "depends",
    "throttles",
)


def _requests(
    lines: Iterable[str], defaults: dict[str, Any], payloads: bool = False
) -> list[aqless.PutRequest]:
    requests = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            fields = json.loads(line)
        except ValueError as error:
            raise click.UsageError(f"line {number} is not JSON: {error}") from error
        if payloads:
            fields = {"data": fields}
        if not isinstance(fields, dict):
            raise click.UsageError(
                f"line {number} is not a JSON object (for lines of job data, give --payloads)"
            )
        unknown = sorted(set(fields) - set(LINE_FIELDS))
        if unknown:
            raise click.UsageError(
                f"line {number}: unknown fields {', '.join(unknown)} (a line is a job's record:"
                f" {', '.join(LINE_FIELDS)}; for lines that are each a job's data, give"
                " --payloads)"
            )
        merged = {**defaults, **fields}
        for own, other in (("at", "delay"), ("delay", "at")):
            if own in fields and other not in fields:  # a line's time wins over the default
                merged.pop(other, None)
        if isinstance(merged.get("at"), str):
            try:
                merged["at"] = aware_time(merged["at"])
            except ValueError as error:
                raise click.UsageError(f"line {number}: at: {error}") from error
        if not merged.get("klass"):
            raise click.UsageError(f"line {number} names no klass (and no KLASS was given)")
        try:
            requests.append(aqless.PutRequest(**merged))
        except aqless.AqlessError as error:
            raise click.UsageError(f"line {number}: {error}") from error
    return requests


@click.command(short_help="Put a job (or a JSON-lines file of jobs) into a queue.")
@click.argument("queue")
@click.argument("klass", required=False)
@click.argument("data", required=False, callback=parse_json)
@click.option("--priority", type=float, help="Higher runs earlier (default 0).")
@click.option("--delay", type=float, help="Seconds before the job may run.")
@click.option(
    "--at",
    callback=parse_time,
    help="When the job may run instead: ISO 8601 with a UTC offset (2030-01-01T09:00Z).",
)
@click.option("--tags", multiple=True, help="Tags (repeat, or separate with commas).")
@click.option("--retries", type=int, help="Retries the job may spend (default 5).")
@click.option("--depends", multiple=True, help="Jids that must complete first (repeat or commas).")
@click.option("--throttles", multiple=True, help="Throttles the job must hold (repeat or commas).")
@click.option("--jid", help="The job's id (default: a random one); an existing jid is replaced.")
@click.option(
    "--no-replace",
    is_flag=True,
    help="Leave a job of the jid that exists as it is (the put to retry after a lost reply).",
)
@click.option("--dedup", help="A dedup id: no new job while a job holds it (see aqless.Dedup).")
@click.option("--dedup-ttl", type=float, help="Hold the dedup id this many seconds.")
@click.option(
    "--route",
    help="A sharded deployment's routing key: jobs put with one key go to one shard, in order.",
)
@click.option("--debounce", is_flag=True, help="Within --dedup-ttl, replace the pending job.")
@click.option(
    "--file",
    "source",
    type=click.File("r", encoding="utf-8"),
    help="Put one job per line of this JSON-lines file ('-': standard input).",
)
@click.option(
    "--payloads",
    is_flag=True,
    help="With --file, each line is a job's data (any JSON), not its record.",
)
@click.option(
    "--class",
    "class_option",
    metavar="KLASS",
    help="The job's class, as the KLASS argument (handy with --file).",
)
def put(
    queue: str,
    klass: str | None,
    data: Any,
    priority: float | None,
    delay: float | None,
    at: datetime.datetime | None,
    tags: tuple[str, ...],
    retries: int | None,
    depends: tuple[str, ...],
    throttles: tuple[str, ...],
    jid: str | None,
    no_replace: bool,
    dedup: str | None,
    dedup_ttl: float | None,
    debounce: bool,
    route: str | None,
    source: IO[str] | None,
    payloads: bool,
    class_option: str | None,
) -> None:
    """Put a job into QUEUE: KLASS names its class, DATA is its JSON payload.

    With --file, each line is a job's record: a JSON object with the fields klass, data,
    jid, priority, delay, at (ISO 8601 or a Unix time), tags, retries, depends and
    throttles; KLASS and the options are the defaults of every line. With --file and
    --payloads, each line is a job's data (any JSON value), its class KLASS (or --class).
    Lines are put 1,000 per round trip, with a progress bar on a terminal.
    Prints the jid (with --json, {"queue": ..., "jids": [...]}); with --dedup, the jid of the
    job holding the id.

    \b
    Examples:
      aqless put emails app.jobs.Send '{"to": "ann@example.com"}' --priority 5 --tags vip
      aqless put reports app.jobs.Daily --delay 3600
      aqless put reports app.jobs.Daily --at 2030-01-01T09:00:00+01:00
      aqless put reports app.jobs.Daily --jid daily-2030-01-01 --no-replace
      aqless put search app.jobs.Index '{"q": "al"}' --dedup index:al --dedup-ttl 2 --debounce
      aqless put emails --file jobs.jsonl
      aqless put emails app.jobs.Send --file - < jobs.jsonl
      aqless put emails --class app.jobs.Send --payloads --file payloads.jsonl
      aqless --deployment billing put invoices app.Invoice '{"id": 7}' --route customer-42
    """
    options: dict[str, Any] = {
        "priority": priority,
        "delay": delay,
        "at": at,
        "tags": names(tags),
        "retries": retries,
        "depends": names(depends),
        "throttles": names(throttles),
    }
    given = {name: value for name, value in options.items() if value is not None}
    if no_replace:
        given["replace"] = False
    if class_option is not None:
        if data is not None:
            raise click.UsageError("give KLASS or --class, not both")
        if klass is not None:  # with --class, the one argument after QUEUE is DATA
            try:
                data = json.loads(klass)
            except ValueError as error:
                raise click.UsageError(f"DATA is not JSON: {error}") from error
        klass = class_option
    if payloads and source is None:
        raise click.UsageError("--payloads goes with --file")
    if payloads and klass is None:
        raise click.UsageError("--payloads needs the jobs' class: give KLASS or --class")
    if delay is not None and at is not None:
        raise click.UsageError("give --delay or --at, not both")
    if dedup is not None:
        try:
            given["dedup"] = aqless.Dedup(dedup, dedup_ttl, debounce)
        except aqless.ConfigurationError as error:
            raise click.UsageError(str(error)) from error
    elif dedup_ttl is not None or debounce:
        raise click.UsageError("--dedup-ttl and --debounce go with --dedup")
    if route is not None and settings().deployment is None:
        raise click.UsageError("--route is for a sharded deployment: give --deployment")
    if source is None:
        if klass is None:
            raise click.UsageError("give KLASS, or --file")
        put_one = client_put(queue, klass, data, jid, given, route)
        jids = [run_any(put_one)]
    else:
        if data is not None or jid is not None:
            raise click.UsageError("DATA and --jid are per line with --file")
        requests = _requests(source, {"klass": klass, **given}, payloads)
        jids = run_any(lambda client: _put_all(client.queues[queue], requests, route))
    summary = jids if source is None else [f"put {plural(len(jids), 'job')} into {queue}"]
    emit({"queue": queue, "jids": jids}, *summary)


def client_put(
    queue: str,
    klass: str,
    data: Any,
    jid: str | None,
    options: dict[str, Any],
    route: str | None = None,
) -> Callable[[AnyClient], Awaitable[str]]:
    def action(client: AnyClient) -> Awaitable[str]:
        if client.sharded:
            return client.queues[queue].put(klass, data, jid=jid, route=route, **options)
        return client.queues[queue].put(klass, data, jid=jid, **options)

    return action


async def _put_all(
    queue: aqless.Queue | aqless.ShardedQueue, requests: list[aqless.PutRequest], route: str | None
) -> list[str]:
    jids: list[str] = []
    with progress(f"putting into {queue.name}", len(requests)) as advance:
        for batch in chunks(requests, BATCH):
            if isinstance(queue, aqless.ShardedQueue):
                jids += await queue.put_many(batch, batch=BATCH, route=route)
            else:
                jids += await queue.put_many(batch, batch=BATCH)
            advance(len(batch))
    return jids


COMMANDS = (put,)
