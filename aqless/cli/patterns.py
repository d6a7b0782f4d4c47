"""patterns: the stored queue identifier patterns and priority patterns (REQLESS 7)."""

from __future__ import annotations

from typing import Any

import click

import aqless
from aqless.cli.render import joined, table
from aqless.cli.runtime import AnyClient, NotFound, emit, run_any
from aqless.documents import priority_document


def patterns_document(
    identifiers: dict[str, list[str]], priorities: list[aqless.PriorityPattern]
) -> dict[str, Any]:
    return {
        "identifiers": identifiers,
        "priorities": [priority_document(group) for group in priorities],
    }


async def both(
    client: AnyClient,
) -> tuple[dict[str, list[str]], list[aqless.PriorityPattern]]:
    patterns = client.queue_patterns
    return await patterns.identifiers(), await patterns.priorities()


@click.group(short_help="Queue identifier and priority patterns.")
def patterns() -> None:
    """Which queues a worker's `@identifier` stands for, and the priority order a worker
    started with --priorities serves its queues in (stored for every qless client).

    \b
    Examples:
      aqless patterns show
      aqless patterns set-identifier mail 'mail-*' '!mail-spam'    aqless-run -q @mail
      aqless patterns unset-identifier mail
      aqless patterns set-priorities 'urgent-*' default 'fairly:bulk-*'
      aqless patterns set-priorities                                 back to the default
    """


@patterns.command(short_help="The identifiers and the priority groups.")
def show() -> None:
    """The identifiers with their queue patterns, and the priority groups in order.

    \b
    Example:
      aqless --json patterns show
    """
    identifiers, priorities = run_any(both)
    emit(
        patterns_document(identifiers, priorities),
        table(
            "identifiers",
            ("name", "queues"),
            sorted((name, joined(patterns)) for name, patterns in identifiers.items()),
        ),
        table(
            "priorities",
            ("#", "queues", "fairly"),
            (
                (n, joined(g.patterns), "yes" if g.fairly else "")
                for n, g in enumerate(priorities, 1)
            ),
        ),
    )


@patterns.command("set-identifier", short_help="Make @NAME stand for the queues PATTERNs match.")
@click.argument("name")
@click.argument("queue_patterns", nargs=-1, required=True, metavar="PATTERN...")
def set_identifier(name: str, queue_patterns: tuple[str, ...]) -> None:
    """Make @NAME stand for the queues the PATTERNs (names, globs, !negations) match,
    replacing what it stood for; the other identifiers are kept.

    \b
    Example:
      aqless patterns set-identifier mail 'mail-*' '!mail-spam'
    """

    async def act(client: AnyClient) -> dict[str, list[str]]:
        identifiers = await client.queue_patterns.identifiers()
        identifiers[name] = list(queue_patterns)
        await client.queue_patterns.set_identifiers(identifiers)
        return await client.queue_patterns.identifiers()

    identifiers = run_any(act)
    emit(identifiers, f"@{name} = {joined(identifiers.get(name, []))}")


@patterns.command("unset-identifier", short_help="Forget the identifier NAME.")
@click.argument("name")
def unset_identifier(name: str) -> None:
    """Forget the identifier NAME (`default` goes back to every queue); exit 1 if unknown.

    \b
    Example:
      aqless patterns unset-identifier mail
    """

    async def act(client: AnyClient) -> dict[str, list[str]]:
        identifiers = await client.queue_patterns.identifiers()
        if identifiers.pop(name, None) is None:
            raise NotFound(f"no identifier {name!r}")
        await client.queue_patterns.set_identifiers(identifiers)
        return await client.queue_patterns.identifiers()

    identifiers = run_any(act)
    emit(identifiers, f"@{name} unset")


def parse_groups(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> list[aqless.PriorityPattern]:
    try:
        return [aqless.PriorityPattern.parse(value) for value in values]
    except aqless.ConfigurationError as error:
        raise click.BadParameter(str(error), ctx, param) from error


@patterns.command("set-priorities", short_help="Replace the priority order.")
@click.argument("groups", nargs=-1, callback=parse_groups, metavar="GROUP...")
def set_priorities(groups: list[aqless.PriorityPattern]) -> None:
    """Replace the priority order: a worker serves the queues of the first GROUP first.
    Each GROUP is comma-separated globs; a `fairly:` prefix shuffles the group's queues
    (each reservation). `default` stands for the queues no group matches; without
    it, they come last. No GROUP: back to the default order.

    \b
    Examples:
      aqless patterns set-priorities 'urgent-*,alerts' default 'fairly:bulk-*'
      aqless patterns set-priorities
    """

    async def act(client: AnyClient) -> list[aqless.PriorityPattern]:
        await client.queue_patterns.set_priorities(groups)
        return await client.queue_patterns.priorities()

    priorities = run_any(act)
    emit(
        patterns_document({}, priorities)["priorities"],
        "priorities: " + " > ".join(str(group) for group in priorities),
    )


COMMANDS = (patterns,)
