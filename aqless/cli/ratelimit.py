"""rate-limit: list, show, set and delete rate limits (named ones and queues' own)."""

from __future__ import annotations

from typing import Any

import click

from aqless.cli.render import duration, table
from aqless.cli.runtime import AnyClient, emit, run_any
from aqless.contracts import RateLimit
from aqless.documents import rate_limit_document
from aqless.ops import known
from aqless.ops.known import limit_label
from aqless.ops.params import NUMBERS_MAY_BE_NEGATIVE, Ruled

QUEUE_FLAG = click.option(
    "--queue", "is_queue", is_flag=True, help="NAME is a queue: its own limit."
)


def _limiter(client: AnyClient, name: str, is_queue: bool) -> RateLimit:
    return client.queues[name].rate_limit if is_queue else client.rate_limits[name]


@click.group("rate-limit", short_help="Show, set and delete rate limits.")
def rate_limit() -> None:
    """Show, set and delete rate limits: how many jobs may start in any PER seconds.

    \b
    Examples:
      aqless rate-limit list
      aqless rate-limit set api 50 --per 1        at most 50 starts of jobs naming `api` a second
      aqless rate-limit set api 50 --smooth       the same, one start every 20 ms
      aqless rate-limit set emails 10 --per 60 --queue   the emails queue's own limit
      aqless rate-limit delete api
    """


def _view(documents: list[dict[str, Any]]) -> Any:
    return table(
        None,
        ["rate limit", "limit#", "per#", "mode", "used#", "next free in#"],
        [
            [
                limit_label(d["id"]),
                d["limit"] or "none",
                duration(d["period"]),
                "smooth" if d["smooth"] else "burst",
                d["used"],
                duration(d["wait"]) if d["wait"] > 0 else "now",
            ]
            for d in documents
        ],
    )


@rate_limit.command("list", short_help="Every rate limit, its use and next free start.")
def list_limits() -> None:
    """Every rate limit: its limit and period, the starts in the current window, and the
    seconds until its next free start.

    \b
    Example:
      aqless rate-limit list --json
    """

    async def read(client: AnyClient) -> list[dict[str, Any]]:
        return [rate_limit_document(info) for info in await client.rate_limits.all()]

    documents = run_any(read)
    emit(documents, _view(documents))


@rate_limit.command(short_help="A rate limit, its use and next free start.")
@click.argument("name")
@QUEUE_FLAG
def show(name: str, is_queue: bool) -> None:
    """A rate limit: its limit and period, the starts in the current window and the seconds
    until the next free start.

    \b
    Examples:
      aqless rate-limit show api
      aqless rate-limit show emails --queue
    """

    async def read(client: AnyClient) -> dict[str, Any]:
        document = rate_limit_document(await _limiter(client, name, is_queue).get())
        if not document["limit"]:  # none set: a queue never seen, or a name never set
            await known.require(client, "queue" if is_queue else "rate limit", name)
        return document

    document = run_any(read)
    emit(document, _view([document]))


@rate_limit.command(
    "set",
    short_help="Start at most LIMIT jobs per PER seconds.",
    context_settings=NUMBERS_MAY_BE_NEGATIVE,
)
@click.argument("name")
@click.argument("limit", type=Ruled("limit"))
@click.option("--per", type=Ruled("per"), default=1.0, help="Seconds.")
@click.option(
    "--smooth",
    is_flag=True,
    help="Spread the starts evenly, PER/LIMIT seconds apart (default: bursts of up to LIMIT).",
)
@QUEUE_FLAG
def set_limit(name: str, limit: int, per: float, smooth: bool, is_queue: bool) -> None:
    """Start at most LIMIT jobs of the queue NAME (--queue), or naming NAME, in any PER
    seconds, across every worker. Without --smooth the starts come in bursts: up to LIMIT at
    once, so LIMIT at the end of one window and LIMIT at the start of the next fall within
    PER seconds. With --smooth they are PER/LIMIT seconds apart. On a sharded deployment
    (--deployment), a queue's limit pins the queue to one shard, where its jobs then go.

    \b
    Examples:
      aqless rate-limit set api 50 --per 1
      aqless rate-limit set api 50 --per 1 --smooth
      aqless rate-limit set emails 10 --per 60 --queue
    """

    async def act(client: AnyClient) -> None:
        if is_queue:  # on a sharded deployment this pins the queue to one shard first
            await client.queues[name].set_rate_limit(limit, per=per, smooth=smooth)
        else:
            await client.rate_limits[name].set(limit, per=per, smooth=smooth)

    run_any(act)
    mode = "smooth" if smooth else "burst"
    emit(
        {"name": name, "limit": limit, "per": per, "smooth": smooth},
        f"{name}: at most {limit} per {duration(per)} ({mode})",
    )


@rate_limit.command()
@click.argument("name")
@QUEUE_FLAG
def delete(name: str, is_queue: bool) -> None:
    """Lift a rate limit.

    \b
    Example:
      aqless rate-limit delete api
    """
    run_any(lambda client: _limiter(client, name, is_queue).delete())
    emit({"deleted": name}, f"deleted rate limit {name}")


COMMANDS = (rate_limit,)
