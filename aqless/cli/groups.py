"""groups: a queue's fairness groups, and setting a group's weight, concurrency cap and
rate limit."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

import aqless
from aqless.cli.queues import warned_unseen
from aqless.cli.render import duration, table
from aqless.cli.runtime import AnyClient, emit, note, run_any
from aqless.documents import group_document
from aqless.errors import InvalidArgumentError
from aqless.ops import known
from aqless.ops.groups import NONE, GroupSettings, Rate
from aqless.ops.params import Ruled
from aqless.puts import checked_group

T = TypeVar("T")


class ListingGroup(click.Group):
    """A group whose first word, when it names no subcommand, is the argument of `show`:
    ``aqless groups QUEUE`` is ``aqless groups show QUEUE``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["show", *args]
        return super().parse_args(ctx, args)


@click.group(cls=ListingGroup, short_help="A queue's fairness groups; set a group's settings.")
def groups() -> None:
    """A queue's fairness groups (jobs put with a group), and setting a group's weight,
    concurrency cap and rate limit. `aqless groups QUEUE` is `aqless groups show QUEUE`.

    \b
    Examples:
      aqless groups emails
      aqless groups set emails acme --weight 2 --concurrency 5 --rate 100/60
      aqless groups set emails acme --concurrency none --rate none
    """


@groups.command(short_help="A queue's fairness groups: backlog, running jobs, settings.")
@click.argument("queue")
def show(queue: str) -> None:
    """QUEUE's fairness groups (jobs put with a group): each one's jobs waiting and
    running, weight, concurrency cap and rate limit (its starts in the current window of
    the limit's); "(none)" is the jobs put without a group. On a sharded deployment, over
    every shard.

    \b
    Examples:
      aqless groups emails
      aqless --json groups emails | jq '.[] | select(.waiting > 100) | .name'
    """

    async def read(client: AnyClient) -> list[aqless.GroupCounts]:
        await known.require(client, "queue", queue)
        return await client.queues[queue].groups()

    records = run_any(read)
    rows = [
        (
            "(none)" if g.name is None else g.name,
            g.waiting,
            g.running,
            f"{g.weight:g}",
            g.concurrency or "",
            _rate(g),
        )
        for g in records
    ]
    columns = ("group", "waiting#", "running#", "weight", "concurrency", "rate limit")
    view = table(f"groups of {queue}", columns, rows) if rows else f"{queue} has no groups"
    emit([group_document(g) for g in records], view)


def _rate(group: aqless.GroupCounts) -> str:
    """A group's rate limit as 'started/limit per period' ('' for none)."""
    if not group.rate_limit:
        return ""
    return f"{group.rate_used}/{group.rate_limit} per {duration(group.rate_period)}"


def _checked(
    check: Callable[..., T],
    *values: object,
    param: click.Parameter | None,
    ctx: click.Context | None,
) -> T:
    """`check(*values)`, its InvalidArgumentError a usage error naming the parameter."""
    try:
        return check(*values)
    except InvalidArgumentError as error:
        raise click.BadParameter(error.detail, ctx=ctx, param=param) from error


class GroupName(click.ParamType[str, Any]):
    name = "group"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        return _checked(checked_group, value, "group.set", param=param, ctx=ctx)


class Concurrency(Ruled):
    """`--concurrency`: its rule's whole number, or none (0: no cap)."""

    def __init__(self) -> None:
        super().__init__("concurrency")
        self.name = "N|none"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value.strip().lower() == NONE:
            return 0
        return super().convert(value, param, ctx)


class RateLimitValue(click.ParamType[Rate, Any]):
    """`--rate`: N/SECONDS (N alone: a second) by the rules `limit` and `per`, or none."""

    name = "N/SECONDS|none"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Rate:
        if isinstance(value, Rate):
            return value
        text = str(value).strip().lower()
        if text == NONE:
            return Rate(None)
        limit_text, _, per_text = text.partition("/")
        limit = Ruled("limit").convert(limit_text, param, ctx)
        return Rate(limit, Ruled("per").convert(per_text or "1", param, ctx))


@groups.command("set", short_help="Set a group's weight, concurrency cap and rate limit.")
@click.argument("queue")
@click.argument("group", type=GroupName())
@click.option(
    "--weight",
    type=Ruled("weight"),
    help="Turns of the pops for each turn of a group of weight 1 (the default).",
)
@click.option(
    "--concurrency",
    type=Concurrency(),
    help="At most N of the group's jobs running at once; 0 or none lifts the cap.",
)
@click.option(
    "--rate",
    type=RateLimitValue(),
    help="At most N starts of the group's jobs in any SECONDS (N alone: a second); "
    "none lifts the limit.",
)
def set_group(
    queue: str, group: str, weight: float | None, concurrency: int | None, rate: Rate | None
) -> None:
    """Set GROUP of QUEUE's weight, concurrency cap and rate limit (those given; the
    others stay as they are). Every value is checked before any is written: a bad one
    exits 2 and changes nothing. A group at its cap or limit is passed over; the other
    groups keep their turns. A queue or group never seen is set all the same (so that it
    is ready before its first job), with a warning on stderr naming the closest known ones.

    \b
    Examples:
      aqless groups set emails acme --weight 2
      aqless groups set emails acme --concurrency 5 --rate 100/60
      aqless groups set emails acme --concurrency none --rate none
    """
    if weight is None and concurrency is None and rate is None:
        raise click.UsageError("give --weight, --concurrency or --rate")

    async def act(client: AnyClient) -> None:
        target = client.queues[queue]
        if not await warned_unseen(client, (queue,), "set all the same"):
            names = [g.name for g in await target.groups() if g.name is not None]
            if group not in names:
                missing = known.UnknownNameError("group", group, known.closest(group, names))
                note(f"warning: {missing} in {queue}: set all the same")
        await GroupSettings(weight, concurrency, rate).apply(client, queue, group)

    run_any(act)
    document: dict[str, object] = {"queue": queue, "group": group}
    lines: list[str] = []
    if weight is not None:
        document["weight"] = weight
        lines.append(f"{queue}/{group}: weight {weight:g}")
    if concurrency is not None:
        document["concurrency"] = concurrency
        lines.append(f"{queue}/{group}: concurrency {concurrency or 'unlimited'}")
    if rate is not None:
        document["rate_limit"] = rate.limit or 0
        document["rate_period"] = rate.per if rate.limit is not None else 0.0
        limited = "none"
        if rate.limit is not None:
            limited = f"at most {rate.limit} per {duration(rate.per)}"
        lines.append(f"{queue}/{group}: rate limit {limited}")
    emit(document, *lines)


COMMANDS = (groups,)
