"""shards: show a sharded deployment's shards, add shards, drain one, forget a drained one
(aqless.sharded; the --url is a node of the Cluster, or redis+cluster://h:p,h:p)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import click

import aqless
from aqless.cli.render import table
from aqless.cli.runtime import emit, settings
from aqless.shard_resize import jobs_held
from aqless.sharded import FORGET_GRACE

T = TypeVar("T")


def _run(deployment: str, action: Callable[[aqless.ShardedClient], Awaitable[T]]) -> T:
    url = settings().url
    if url is None:
        raise click.UsageError("a sharded deployment lives on a Cluster: give --url")

    async def main() -> T:
        async with aqless.ShardedClient(url, deployment=deployment) as client:
            return await action(client)

    return anyio.run(main)


async def _document(client: aqless.ShardedClient) -> dict[str, Any]:
    shard_map = client.shards
    owned = Counter(shard_map.generations[-1])
    return {
        "deployment": client.deployment,
        "version": shard_map.version,
        "generations": len(shard_map.generations),
        "pinned": dict(shard_map.pinned),
        "shards": [
            {
                "id": shard.id,
                "namespace": shard.namespace,
                "state": shard.state,
                "since": shard.since,
                "buckets": owned.get(shard.id, 0),
                "jobs": await jobs_held(client.shard(shard.id)),
            }
            for shard in shard_map.shards
        ],
    }


def _show(document: dict[str, Any]) -> None:
    title = (
        f"{document['deployment']}: map version {document['version']}, "
        f"{document['generations']} generation(s)"
    )
    view = table(
        title,
        ["shard#", "namespace", "state", "buckets#", "jobs#", "pinned queues"],
        [
            [
                shard["id"],
                shard["namespace"],
                shard["state"],
                shard["buckets"],
                shard["jobs"],
                ", ".join(q for q, pin in document["pinned"].items() if pin == shard["id"]),
            ]
            for shard in document["shards"]
        ],
    )
    emit(document, view)


DEPLOYMENT = click.option(
    "--deployment",
    "-d",
    envvar="AQLESS_DEPLOYMENT",
    required=True,
    metavar="NAME",
    help="The sharded deployment (env AQLESS_DEPLOYMENT).",
)


@click.group(short_help="Show, add, drain and forget the shards of a sharded deployment.")
def shards() -> None:
    """Show, add, drain and forget the shards of a sharded deployment on a Cluster.

    \b
    Examples:
      aqless --url redis+cluster://h:7000 shards show -d billing
      aqless --url redis://h:7000 shards add -d billing 2      two more shards
      aqless --url redis://h:7000 shards remove -d billing 1   shard 1 takes no new job
      aqless --url redis://h:7000 shards forget -d billing 1   once it holds none
    """


@shards.command("show", short_help="The shards, their buckets and the jobs they hold.")
@DEPLOYMENT
def show(deployment: str) -> None:
    """Every shard: its namespace, state, buckets in the newest generation, the jobs it
    holds (any state but complete), and the queues pinned to it.

    \b
    Example:
      aqless --url redis+cluster://h:7000,h:7001 shards show -d billing --json
    """
    _show(_run(deployment, _document))


@shards.command("add", short_help="Add shards to a live deployment.")
@DEPLOYMENT
@click.argument("count", type=click.IntRange(min=1), default=1)
def add(deployment: str, count: int) -> None:
    """Add COUNT shards (default 1), each on a primary holding the fewest: they take their
    share of the buckets from the others; jobs already put stay where they are.

    \b
    Example:
      aqless --url redis://h:7000 shards add -d billing 2
    """

    async def grow(client: aqless.ShardedClient) -> dict[str, Any]:
        await client.add_shards(count)
        return await _document(client)

    _show(_run(deployment, grow))


@shards.command("remove", short_help="Drain a shard: it takes no new job.")
@DEPLOYMENT
@click.argument("shard", type=int)
def remove(deployment: str, shard: int) -> None:
    """Drain SHARD: its buckets go to the other shards; workers empty it. Forget it once
    `shards show` counts no job on it.

    \b
    Example:
      aqless --url redis://h:7000 shards remove -d billing 1
    """

    async def drain(client: aqless.ShardedClient) -> dict[str, Any]:
        await client.remove_shard(shard)
        return await _document(client)

    _show(_run(deployment, drain))


@shards.command("forget", short_help="Drop a drained, empty shard from the map.")
@DEPLOYMENT
@click.argument("shard", type=int)
@click.option(
    "--grace",
    type=click.FloatRange(min=0),
    default=FORGET_GRACE,
    show_default=True,
    help="Seconds it must have drained (longer than clients take to read the map).",
)
def forget(deployment: str, shard: int, grace: float) -> None:
    """Drop SHARD from the map, refused while it holds jobs or drained for less than
    --grace seconds.

    \b
    Example:
      aqless --url redis://h:7000 shards forget -d billing 1
    """

    async def drop(client: aqless.ShardedClient) -> dict[str, Any]:
        await client.forget_shard(shard, grace=grace)
        return await _document(client)

    _show(_run(deployment, drop))


COMMANDS = [shards]
