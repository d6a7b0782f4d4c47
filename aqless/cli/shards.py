"""shards: a sharded deployment's shards, one row each, so that a lagging shard shows."""

from __future__ import annotations

import click
from rich.table import Table

import aqless
from aqless.cli.render import duration, table
from aqless.cli.runtime import AnyClient, NotSharded, emit, run_any, settings
from aqless.documents import shard_document
from aqless.sharded_views import ShardReport

STATES = ("waiting", "running", "scheduled", "depends", "stalled")


def megabytes(used: int | None) -> str:
    return "-" if used is None else f"{used / 1_048_576:.1f} MB"


def shards_table(reports: list[ShardReport]) -> Table:
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


@click.command(short_help="A sharded deployment's shards: counts, lag, memory.")
def shards() -> None:
    """Each shard of the sharded deployment (--deployment): its namespace, state and
    primary, its jobs by state, its lag (how long the longest-waiting next job of its
    queues has waited) and its primary's used memory.

    \b
    Example:
      aqless --url redis+cluster://10.0.0.1:7000 --deployment billing shards
    """

    needed = NotSharded("`aqless shards` needs a sharded deployment: give --deployment NAME")
    if settings().deployment is None:
        raise needed  # before a plain client opens a Cluster without a namespace

    async def read(client: AnyClient) -> list[ShardReport]:
        if not isinstance(client, aqless.ShardedClient):
            raise needed
        return await client.shard_report()

    reports = run_any(read)
    emit([shard_document(report) for report in reports], shards_table(reports))


COMMANDS = (shards,)
