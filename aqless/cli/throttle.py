"""throttle: show, set and delete concurrency limits (named ones and queues' own)."""

from __future__ import annotations

import dataclasses
from typing import Any

import click

from aqless._concurrency.routing import gathered
from aqless.cli.render import duration, fields, joined, plural, table
from aqless.cli.runtime import AnyClient, NotFound, emit, progress, run_any
from aqless.documents import throttle_document
from aqless.ops.listings import ListedThrottle, listed_throttles, reindex_throttles
from aqless.ops.params import NUMBERS_MAY_BE_NEGATIVE, Ruled

QUEUE_FLAG = click.option(
    "--queue", "is_queue", is_flag=True, help="NAME is a queue: its own throttle."
)


@click.group(short_help="Show, set and delete throttles.")
def throttle() -> None:
    """Show, set and delete throttles: how many jobs holding one may run at once.

    \b
    Examples:
      aqless throttle list                       every throttle set, with its use
      aqless throttle show smtp
      aqless throttle set smtp 10                at most 10 jobs holding `smtp` run at once
      aqless throttle set smtp 10 --expiration 3600
      aqless throttle set emails 4 --queue       the emails queue's own throttle
      aqless throttle delete smtp
    """


async def _show(client: AnyClient, name: str, is_queue: bool) -> dict[str, Any]:
    if is_queue:
        info = await client.queues[name].throttle()
    else:
        info = await client.throttles[name].get()
    named = client.throttles[info.id]
    document = throttle_document(info, locks=await named.locks(), pending=await named.pending())
    if info.ttl == -2 and not document["locks"] and not document["pending"]:
        raise NotFound(f"no throttle {name!r}")
    return document


def _listed_document(listed: ListedThrottle, shard: int | None) -> dict[str, Any]:
    """A listed throttle's settings, its holders and waiters counted, and its shard."""
    counts = {"locks": listed.locks, "pending": listed.pending}
    return {**dataclasses.asdict(listed.info), **counts} | (
        {} if shard is None else {"shard": shard}
    )


def _expires(ttl: int) -> str:
    return f"in {duration(ttl)}" if ttl >= 0 else "never"


async def _listed(client: AnyClient) -> list[dict[str, Any]]:
    shards = await gathered(client.servers, listed_throttles)
    ids: list[int | None] = [None]
    if client.sharded:
        ids = [shard.id for shard in client.shards.shards]
    return [
        _listed_document(listed, shard)
        for shard, found in zip(ids, shards, strict=True)
        for listed in found
    ]


@throttle.command("list", short_help="Every throttle set: its limit, holders and waiters.")
def list_throttles() -> None:
    """Every throttle that has a maximum: the named ones an aqless client set, and every
    queue's own (shown as `ql:q:<queue>`), with how many jobs hold it and wait for it.
    Nothing scans the server: a named throttle another qless client set is listed once
    `aqless throttle reindex` has found it.

    \b
    Examples:
      aqless throttle list
      aqless --json throttle list
    """
    documents = run_any(_listed)
    rows = [
        (
            document["id"],
            document["maximum"] or "unlimited",
            _expires(document["ttl"]),
            document["locks"],
            document["pending"],
        )
        for document in documents
    ]
    columns = ("throttle", "maximum", "expires", "holding#", "waiting#")
    emit(documents, table("throttles", columns, rows) if rows else "no throttle is set")


@throttle.command(short_help="Find the throttles other qless clients set, for `list`.")
def reindex() -> None:
    """Find the throttles other qless clients set (they keep no index of them) and add them
    to the index `aqless throttle list` and the dashboard read. It walks the server's keys
    with SCAN a thousand at a time, each step a round trip of its own, so that no other
    client waits more than a step; a progress bar shows on a terminal.

    \b
    Example:
      aqless throttle reindex
    """

    async def sweep(client: AnyClient) -> int:
        added = 0
        for server in client.servers:
            keys = int(await server.protocol.plain("throttle.reindex", "DBSIZE"))
            with progress("looking for throttles", keys) as advance:
                added += await reindex_throttles(server, advance=advance)
        return added

    added = run_any(sweep)
    emit({"added": added}, f"indexed {plural(added, 'throttle')} set by other clients")


@throttle.command(short_help="A throttle: its limit, holders and waiters.")
@click.argument("name")
@QUEUE_FLAG
def show(name: str, is_queue: bool) -> None:
    """A throttle: its maximum, expiry, and the jobs holding it and waiting for it.

    \b
    Examples:
      aqless throttle show smtp
      aqless throttle show emails --queue
    """
    document = run_any(lambda client: _show(client, name, is_queue))
    ttl = document["ttl"]
    view = fields(
        [
            ("throttle", document["id"]),
            ("maximum", document["maximum"] or "unlimited"),
            ("expires", _expires(ttl)),
            ("held by", joined(document["locks"])),
            ("waiting", joined(document["pending"])),
        ]
    )
    emit(document, view)


@throttle.command(
    "set",
    short_help="Let at most MAXIMUM jobs holding NAME run.",
    context_settings=NUMBERS_MAY_BE_NEGATIVE,
)
@click.argument("name")
@click.argument("maximum", type=Ruled("maximum"))
@click.option("--expiration", type=Ruled("expiration"), default=0, help="Seconds until it lapses.")
@QUEUE_FLAG
def set_throttle(name: str, maximum: int, expiration: int, is_queue: bool) -> None:
    """Let at most MAXIMUM jobs holding NAME run at once (0: unlimited). On a sharded
    deployment (--deployment), a queue's throttle pins the queue to one shard, where its
    jobs then go.

    \b
    Examples:
      aqless throttle set smtp 10 --expiration 3600
      aqless throttle set emails 4 --queue
    """
    if is_queue and expiration:
        raise click.UsageError("a queue's throttle has no --expiration")

    async def act(client: AnyClient) -> None:
        if is_queue:
            await client.queues[name].set_throttle(maximum)
        else:
            await client.throttles[name].set(maximum, expiration=expiration)

    run_any(act)
    emit({"name": name, "maximum": maximum}, f"{name}: at most {maximum or 'unlimited'}")


@throttle.command()
@click.argument("name")
def delete(name: str) -> None:
    """Delete a throttle: its limit is lifted.

    \b
    Example:
      aqless throttle delete smtp
    """
    run_any(lambda client: client.throttles[name].delete())
    emit({"deleted": name}, f"deleted throttle {name}")


COMMANDS = (throttle,)
