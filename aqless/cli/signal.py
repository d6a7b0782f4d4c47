"""signal: send a signal to a workflow (aqless.workflows)."""

from __future__ import annotations

import json
from typing import Any

import click

from aqless.cli.runtime import AnyClient, emit, run_any
from aqless.ops.params import Ruled


@click.command(short_help="Send a signal to a workflow.")
@click.argument("jid", type=Ruled("jid"))
@click.argument("name", metavar="SIGNAL", type=Ruled("signal"))
@click.argument("payload", required=False)
@click.option("--id", "signal_id", type=Ruled("signal_id"), help="The signal's id: a second "
              "delivery of one id is taken once (default: a new id).")  # fmt: skip
def signal(jid: str, name: str, payload: str | None, signal_id: str | None) -> None:
    """Send SIGNAL to the workflow JID, with PAYLOAD (JSON; default null).

    The workflow takes it at its next wait for SIGNAL; a workflow parked waiting for it is
    made waiting at once. It prints what became of it: woken, kept (for a later wait), or
    duplicate (its --id was delivered before: nothing changed). A job that does not exist
    exits 1; one that has ended is refused (exit 3).

    \b
    Examples:
      aqless signal 3f2a9c... approval '{"by": "mia"}'
      aqless signal 3f2a9c... approval --id approval-42
    """
    value = _decoded(payload)  # kept as typed for the audit entry

    async def act(client: AnyClient) -> str:
        return await client.signal(jid, name, value, signal_id=signal_id)

    delivery = run_any(act)
    emit({"jid": jid, "signal": name, "delivery": delivery}, f"{name} to {jid}: {delivery}")


def _decoded(payload: str | None) -> Any:
    if payload is None:
        return None
    try:
        return json.loads(payload)
    except ValueError as error:
        raise click.BadParameter(f"not JSON: {error}", param_hint="PAYLOAD") from error


COMMANDS = (signal,)
