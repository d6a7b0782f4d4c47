"""audit: the log of state-changing actions taken from the dashboard and the CLI."""

from __future__ import annotations

import click

from aqless.cli.render import joined, moment, short, table
from aqless.cli.runtime import AnyClient, console, run_any, settings, to_json
from aqless.ops import audit as audit_log
from aqless.ops.params import Ruled


@click.command(short_help="Who changed what, and when (dashboard and CLI).")
@click.option(
    "-n", "--limit", type=Ruled("count"), default=50, show_default=True, help="Entries to show."
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def audit(limit: int, as_json: bool) -> None:
    """The newest state-changing actions taken from the dashboard or this command, newest
    first: when, who (a dashboard user; user@host for the CLI), through what, the action,
    its targets and the outcome.

    \b
    Examples:
      aqless audit
      aqless audit --limit 500 --json | jq '.[] | select(.via == "web")'
    """

    async def read(client: AnyClient) -> list[audit_log.AuditEntry]:
        return await audit_log.read(client, limit=limit)

    entries = run_any(read)
    if as_json or settings().json:
        click.echo(to_json([entry.document() for entry in entries]))
        return
    rows = [
        (
            moment(entry.at),
            entry.who,
            entry.via,
            entry.action,
            short(joined(entry.targets), 60),
            short(joined(f"{name}={value}" for name, value in entry.detail.items()), 40),
            short(entry.outcome, 40),
        )
        for entry in entries
    ]
    columns = ("when", "who", "via", "action", "targets", "options", "outcome")
    console().print(table(None, columns, rows))


COMMANDS = (audit,)
