"""`aqless flow JID`: the flow a job belongs to, drawn as a tree with each job's state."""

from __future__ import annotations

import dataclasses

import click
from rich.text import Text

from aqless.cli.runtime import AnyClient, NotFound, emit, run_any
from aqless.flows import FlowTree, draw


@click.command(short_help="Draw the flow a job belongs to, with each job's state.")
@click.argument("jid")
def flow(jid: str) -> None:
    """Draw the flow JID belongs to (from its root, whichever job of it JID is): each job's
    name, class, jid and state, children below their parent. A job of no flow is a tree
    of one. With --json, the tree as nested objects (`children` lists).

    \b
    Example:
      aqless flow 3f2a9c...
    """
    tree = run_any(lambda client: _tree(client, jid))
    emit(dataclasses.asdict(tree), Text(draw(tree)))


async def _tree(client: AnyClient, jid: str) -> FlowTree:
    tree = await client.flows.tree(jid)
    if tree is None:
        raise NotFound(f"no job {jid}")
    return tree


COMMANDS = (flow,)
