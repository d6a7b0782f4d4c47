"""batch, batches: a batch's live totals and callbacks, and the batches kept."""

from __future__ import annotations

from typing import Any

import click

from aqless.batches import Batch
from aqless.cli.render import fields, moment, short, table
from aqless.cli.runtime import AnyClient, NotFound, emit, run_any
from aqless.ops.params import Ruled


def _callbacks(batch: Batch) -> str:
    parts = [
        f"{kind}: {c.klass} in {c.queue} ({'put ' + c.jid if c.fired else 'not put'})"
        for kind, c in batch.callbacks.items()
    ]
    return "; ".join(parts) or "-"


async def _get(client: AnyClient, bid: str) -> Batch:
    found = await client.batches.get(bid)
    if found is None:
        raise NotFound(f"no batch {bid!r} (it may have expired)")
    return found


@click.command(short_help="A batch's totals and callbacks.")
@click.argument("bid")
def batch(bid: str) -> None:
    """A batch's live totals (total, pending, done, failed) and its callbacks.

    \b
    Examples:
      aqless batch 3f2a...
      aqless --json batch 3f2a...
    """
    found = run_any(lambda client: _get(client, bid))
    view = fields(
        [
            ("batch", found.id),
            ("description", short(found.description) or "-"),
            ("state", found.state),
            ("total", found.total),
            ("pending", found.pending),
            ("done", found.done),
            ("failed", found.failed),
            ("created", moment(found.created)),
            ("finished", moment(found.finished or 0)),
            ("expires", moment(found.expires or 0)),
            ("callbacks", _callbacks(found)),
        ]
    )
    emit(found.to_json(), view)


@click.command(short_help="The batches kept, newest first.")
@click.option("-n", "--count", type=Ruled("count"), default=25, help="How many.")
@click.option("--offset", type=Ruled("offset"), default=0, help="How many to skip.")
def batches(count: int, offset: int) -> None:
    """The batches kept (running, and finished ones until they expire), newest first.

    \b
    Examples:
      aqless batches
      aqless batches -n 100 --json
    """
    page = run_any(lambda client: client.batches.recent(offset=offset, count=count))
    document: dict[str, Any] = {
        "total": page.total,
        "batches": [found.to_json() for found in page.batches],
    }
    rows = [
        (
            found.id,
            short(found.description, 30) or "-",
            found.total,
            found.pending,
            found.done,
            found.failed,
            found.state,
            moment(found.created),
        )
        for found in page.batches
    ]
    columns = ("batch", "description", "total#", "pending#", "done#", "failed#", "state", "created")
    emit(document, table(f"{page.total} batches", columns, rows))


COMMANDS = (batch, batches)
