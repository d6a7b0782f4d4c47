"""queue empty: cancel a queue's jobs in chosen states, after a confirmation, with a
progress bar; the jobs of each state counted."""

from __future__ import annotations

import click

from aqless.cli.runtime import AnyClient, emit, note, progress, run_any
from aqless.ops.emptying import (
    CHUNK_MOST,
    DEFAULT_STATES,
    EMPTIED_STATES,
    Emptying,
    cancel_all,
    in_order,
    listed,
)


def chosen_states(values: tuple[str, ...]) -> list[str]:
    names = [name.strip() for value in values for name in value.split(",") if name.strip()]
    if not names:
        names = list(DEFAULT_STATES)
    if "all" in names:
        return list(EMPTIED_STATES)
    unknown = sorted(set(names) - set(EMPTIED_STATES))
    if unknown:
        raise click.BadParameter(
            f"{', '.join(unknown)}: not one of {', '.join(EMPTIED_STATES)}, all",
            param_hint="'--state'",
        )
    return in_order(names)


@click.group(short_help="Operate on one queue: empty it.")
def queue() -> None:
    """Operate on one queue as a whole.

    \b
    Examples:
      aqless queue empty emails                 cancel its waiting, scheduled... jobs
      aqless queue empty emails --state failed --yes
    """


@queue.command(short_help="Cancel a queue's jobs (waiting, scheduled, depends, throttled).")
@click.argument("name", metavar="QUEUE")
@click.option(
    "--state",
    "states",
    multiple=True,
    metavar="STATE",
    help=f"Cancel the jobs in STATE: {', '.join(EMPTIED_STATES)}, or all (repeat it, or "
    f"separate with commas; default: {', '.join(DEFAULT_STATES)}).",
)
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
def empty(name: str, states: tuple[str, ...], yes: bool) -> None:
    """Cancel QUEUE's jobs in the chosen states: by default those waiting, scheduled,
    waiting on dependencies and throttled; running, stalled and failed ones only when
    --state names them (a worker running a cancelled job loses it).

    The jobs are counted first and you are asked to confirm (--yes does not ask; without
    a terminal, --yes is needed). A progress bar is drawn on a terminal. A job that a job
    outside the queue (or outside the chosen states) depends on is kept: the server refuses
    to cancel it, and it is listed with the reason. Jobs put while the queue empties stay.
    On a sharded deployment, every shard's part of the queue is emptied.

    \b
    Examples:
      aqless queue empty emails
      aqless queue empty emails --state waiting --state scheduled --yes
      aqless queue empty emails --state all --yes
      aqless --json queue empty emails --state failed --yes
    """
    wanted = chosen_states(states)
    emptying = run_any(lambda client: listed(client, name, wanted))
    if emptying.total == 0:
        emit(_document(emptying), f"{name}: no job to cancel")
        return
    if not yes:
        click.confirm(emptying.question(), abort=True, err=True)

    async def act(client: AnyClient) -> Emptying:
        with progress(f"emptying {name}", emptying.total) as advance:
            await cancel_all(client, emptying, advance)
        return emptying

    run_any(act)
    for jid, reason in emptying.kept.items():
        note(f"kept {jid}: {reason}")
    emit(_document(emptying), emptying.outcome())


def _document(emptying: Emptying) -> dict[str, object]:
    return {
        "queue": emptying.queue,
        "cancelled": {state: emptying.cancelled.get(state, 0) for state in emptying.found},
        "total": sum(emptying.cancelled.values()),
        "kept": emptying.kept,
    }


__all__ = ["CHUNK_MOST", "COMMANDS"]

COMMANDS = (queue,)
