"""outbox: relay the transactional outbox's committed puts to the server, and show what
waits in it (aqless.outbox)."""

from __future__ import annotations

import time
from dataclasses import asdict
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import click

import aqless
from aqless.cli.render import fields
from aqless.cli.runtime import emit, run
from aqless.errors import needs_extra

if TYPE_CHECKING:
    from aqless.outbox import Relay

DATABASE = click.option(
    "--database",
    envvar="AQLESS_OUTBOX_URL",
    required=True,
    metavar="URL",
    help="The application's database, as SQLAlchemy names it "
    "(postgresql+psycopg://..., sqlite:///app.db); or AQLESS_OUTBOX_URL.",
)


def outbox_module() -> SimpleNamespace:
    """What the commands use of ``aqless.outbox``, imported only when asked for: it needs
    the `outbox` extra."""
    with needs_extra("outbox", "aqless outbox"):
        from aqless.outbox import Relay
        from aqless.outbox.store import OutboxStore, open_engine
    return SimpleNamespace(Relay=Relay, OutboxStore=OutboxStore, open_engine=open_engine)


@click.group(short_help="Relay the transactional outbox; show what waits in it.")
def outbox() -> None:
    """The transactional outbox (aqless.outbox): puts written in the application's database
    transactions, moved to the server by a relay.

    \b
    Examples:
      aqless outbox relay --database postgresql+psycopg://app@db/app
      aqless outbox relay --database sqlite:///app.db --drain
      aqless outbox status --database postgresql+psycopg://app@db/app
    """


@outbox.command(short_help="Move committed puts to the server (until stopped).")
@DATABASE
@click.option("--drain", is_flag=True, help="Stop once no row is due (else: relay for ever).")
@click.option(
    "--batch",
    type=click.IntRange(min=1),
    default=500,
    show_default=True,
    help="Rows claimed and put in one round.",
)
@click.option(
    "--durable",
    type=click.Choice(["auto", "yes", "no"]),
    default="auto",
    show_default=True,
    help="Durable puts: where the server confirms them (auto), always (yes: rows the server "
    "cannot confirm stay), or never.",
)
def relay(database: str, drain: bool, batch: int, durable: str) -> None:
    """Move the outbox's committed puts to the server as jobs (each once, under its jid),
    then delete them. Runs until stopped (Ctrl-C), or with --drain until no row is due.
    Several relays may run at once on one database.

    \b
    Examples:
      aqless outbox relay --database postgresql+psycopg://app@db/app
      aqless outbox relay --database sqlite:///app.db --drain --durable no
    """
    relay_class: type[Relay] = outbox_module().Relay  # the extra's clear error first
    mode: Any = {"auto": "auto", "yes": True, "no": False}[durable]

    async def action(client: aqless.Client) -> int:
        async with relay_class(client, database, batch=batch, durable=mode) as relaying:
            if drain:
                return await relaying.drain()
            await relaying.run()
            return 0  # run returns only when cancelled

    relayed = run(action)
    emit({"relayed": relayed}, fields([("relayed", relayed)]))


@outbox.command(short_help="What waits in the outbox: counts and lag.")
@DATABASE
def status(database: str) -> None:
    """How many committed puts wait in the outbox, how many the server refused (they are
    tried again, with a growing wait), and the age of the oldest (the relay's lag). Reads
    the database only: it works while the server is away.

    \b
    Examples:
      aqless outbox status --database postgresql+psycopg://app@db/app
      aqless --json outbox status --database sqlite:///app.db
    """
    module = outbox_module()
    engine = module.open_engine(database)
    try:
        document = asdict(module.OutboxStore(engine).stats(time.time()))
    finally:
        engine.dispose()
    emit(
        document,
        fields(
            [
                ("pending", document["pending"]),
                ("retrying", document["retrying"]),
                ("oldest", f"{document['oldest_age']:.1f}s ago"),
                ("last error", document["last_error"] or "-"),
            ]
        ),
    )


COMMANDS = [outbox]
