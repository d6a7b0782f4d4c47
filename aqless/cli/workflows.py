"""signal: send a signal to a workflow; workflows: a queue's parked workflows
(aqless.workflows)."""

from __future__ import annotations

import json
from typing import Any

import click

from aqless.cli.render import ago, moment, table
from aqless.cli.runtime import AnyClient, emit, run_any
from aqless.job import Job
from aqless.ops import known
from aqless.ops.params import Ruled
from aqless.workflows.record import Parked, parked, steps

#: Scheduled jobs read per round trip while looking for parked workflows.
PAGE = 500


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


@click.command(short_help="A queue's parked workflows and why they wait.")
@click.argument("queue")
@click.option("--kind", type=Ruled("workflow.kind"), help="Only those asleep (sleep), "
              "waiting for a signal (signal), for a step's retry (retry) or for their "
              "children (children).")  # fmt: skip
@click.option("-n", "--count", type=Ruled("count"), default=25, show_default=True, help="How many.")
def workflows(queue: str, kind: str | None, count: int) -> None:
    """QUEUE's parked workflows: why each waits, until when, and how many steps it kept.
    A parked workflow is a scheduled job (one waiting for its children, a depends job):
    this reads QUEUE's scheduled, then depends jobs, 500 a round trip, until it found COUNT
    (or read them all).

    \b
    Examples:
      aqless workflows orders
      aqless workflows orders --kind signal -n 100
    """

    async def read(client: AnyClient) -> list[tuple[Job, Parked]]:
        await known.require(client, "queue", queue)
        found: list[tuple[Job, Parked]] = []
        states = {None: ("scheduled", "depends"), "children": ("depends",)}
        for state in states.get(kind, ("scheduled",)):
            offset = 0
            while len(found) < count:
                jids = await client.queues[queue].jobs(state, offset=offset, count=PAGE)
                for job in await client.jobs.get_many(jids):
                    why = parked(job.state, job.data)
                    if why is not None and (kind is None or why.kind == kind):
                        found.append((job, why))
                if len(jids) < PAGE:
                    break
                offset += PAGE
        return found[:count]

    found = run_any(read)
    rows = []
    documents = []
    for job, why in found:
        kept = sum(step.done for step in steps(job.data))
        until = "-" if why.until is None else f"{moment(why.until)} ({ago(why.until)})"
        rows.append((job.jid, job.klass_name, why.describe(), until, str(kept)))
        documents.append(
            {"jid": job.jid, "klass": job.klass_name, "kind": why.kind, "signal": why.signal,
             "until": why.until, "steps": kept}
        )  # fmt: skip
    columns = ("jid", "class", "waits", "until", "steps")
    emit({"queue": queue, "workflows": documents}, table(f"{queue}: parked", columns, rows))


COMMANDS = (signal, workflows)
