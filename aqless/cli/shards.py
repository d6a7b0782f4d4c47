"""shards: a sharded deployment's shards, one row each, so that a lagging shard shows; and
changing them: add shards, drain one, forget a drained one (aqless.sharding.resize)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import click

import aqless
from aqless.cli.render import TableView, duration, table
from aqless.cli.runtime import AnyClient, NotSharded, emit, run_any, settings
from aqless.documents import shard_document
from aqless.sharding.client import FORGET_GRACE
from aqless.sharding.reads import ShardReport

T = TypeVar("T")

STATES = ("waiting", "running", "scheduled", "depends", "stalled")


def megabytes(used: int | None) -> str:
    return "-" if used is None else f"{used / 1_048_576:.1f} MB"


def shards_table(reports: list[ShardReport]) -> TableView:
    rows = [
        (
            report.id,
            report.namespace,
            report.state,
            report.node,
            *(getattr(report, state) for state in STATES),
            duration(report.lag) if report.lag else "-",
            megabytes(report.used_memory),
        )
        for report in reports
    ]
    columns = ("shard#", "namespace", "state", "primary", *(f"{s}#" for s in STATES))
    return table(None, (*columns, "lag#", "memory#"), rows)


@click.group(
    invoke_without_command=True,
    short_help="A sharded deployment's shards: counts, lag, memory; add, drain, forget.",
)
@click.pass_context
def shards(ctx: click.Context) -> None:
    """Each shard of the sharded deployment (--deployment): its namespace, state and
    primary, its jobs by state, its lag (how long the longest-waiting next job of its
    queues has waited) and its primary's used memory. The subcommands change the shards.

    \b
    Examples:
      aqless --url redis+cluster://10.0.0.1:7000 --deployment billing shards
      aqless --url redis+cluster://10.0.0.1:7000 --deployment billing shards add 2
      aqless ... --deployment billing shards remove 1    shard 1 takes no new job
      aqless ... --deployment billing shards forget 1    once it holds none
    """
    if ctx.invoked_subcommand is not None:
        return
    reports = _run_sharded(lambda client: client.shard_report())
    emit([shard_document(report) for report in reports], shards_table(reports))


def _run_sharded(action: Callable[[aqless.ShardedClient], Awaitable[T]]) -> T:
    needed = NotSharded("`aqless shards` needs a sharded deployment: give --deployment NAME")
    if settings().deployment is None:
        raise needed  # before a plain client opens a Cluster without a namespace

    async def sharded(client: AnyClient) -> T:
        if not client.sharded:
            raise needed
        return await action(client)

    return run_any(sharded)


def _changed(action: Callable[[aqless.ShardedClient], Awaitable[object]]) -> None:
    """Run `action`, then show the shards as they are now."""

    async def change(client: aqless.ShardedClient) -> list[ShardReport]:
        await action(client)
        return await client.shard_report()

    reports = _run_sharded(change)
    emit([shard_document(report) for report in reports], shards_table(reports))


@shards.command("add", short_help="Add shards to a live deployment.")
@click.argument("count", type=click.IntRange(min=1), default=1)
def add(count: int) -> None:
    """Add COUNT shards (default 1), each on a primary holding the fewest: they take their
    share of the buckets from the others; jobs already put stay where they are.

    \b
    Example:
      aqless --url redis+cluster://h:7000 --deployment billing shards add 2
    """
    _changed(lambda client: client.add_shards(count))


@shards.command("remove", short_help="Drain a shard: it takes no new job.")
@click.argument("shard", type=int)
def remove(shard: int) -> None:
    """Drain SHARD: its buckets go to the other shards; workers empty it. Forget it once
    `aqless shards` counts no job on it.

    \b
    Example:
      aqless --url redis+cluster://h:7000 --deployment billing shards remove 1
    """
    _changed(lambda client: client.remove_shard(shard))


@shards.command("forget", short_help="Drop a drained, empty shard from the map.")
@click.argument("shard", type=int)
@click.option(
    "--grace",
    type=click.FloatRange(min=0),
    default=FORGET_GRACE,
    show_default=True,
    help="Seconds it must have drained (longer than clients take to read the map).",
)
def forget(shard: int, grace: float) -> None:
    """Drop SHARD from the map, refused (exit 3) while it holds jobs or has drained for
    less than --grace seconds.

    \b
    Example:
      aqless --url redis+cluster://h:7000 --deployment billing shards forget 1
    """
    _changed(lambda client: client.forget_shard(shard, grace=grace))


COMMANDS = (shards,)
