"""queue empty: cancel a queue's jobs in chosen states, after a confirmation, with a
progress bar; the jobs of each state counted."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import click

import aqless
from aqless.cli.render import plural
from aqless.cli.runtime import AnyClient, emit, note, progress, run_any
from aqless.ops import known
from aqless.ops.pacing import Pacer

#: The states `queue empty` takes jobs from, in the order it cancels them (dependents first,
#: so that a job and the jobs waiting on it can go in separate calls).
EMPTIED_STATES = ("depends", "scheduled", "waiting", "throttled", "stalled", "running", "failed")

#: The most jobs one call lists or cancels, however fast the last one was (a mismeasured
#: call never lets the next hold the server long).
CHUNK_MOST = 100

#: What `queue empty` cancels without --state: the jobs no worker holds and no failure keeps.
DEFAULT_STATES = ("waiting", "scheduled", "depends", "throttled")


@dataclass
class Emptying:
    """The jids to cancel by state (each jid under the first state it was listed in), then
    what was cancelled and what the server kept (a job others depend on)."""

    queue: str
    found: dict[str, list[str]]
    cancelled: dict[str, int] = field(default_factory=dict)
    kept: dict[str, str] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(len(jids) for jids in self.found.values())

    def summary(self) -> str:
        return ", ".join(f"{state} {len(jids)}" for state, jids in self.found.items() if jids)


def partitions(client: AnyClient, queue: str) -> list[aqless.Queue]:
    """The queue itself, or each shard's part of it on a sharded deployment."""
    return [server.queues[queue] for server in client.servers]


async def every_jid(queue: aqless.Queue, state: str, pacer: Pacer) -> list[str]:
    """Every jid `queue` lists in `state`, a page at a time (paced: no page holds the server
    long)."""
    if state == "failed":  # paged by the server, a bounded read a call
        return await queue.jobs(state, count=sys.maxsize)
    jids: list[str] = []
    while True:
        count = pacer.size
        async with pacer.timed(count):
            page = await queue.jobs(state, offset=len(jids), count=count)
        jids += page
        if len(page) < count:
            return list(dict.fromkeys(jids))


async def listed(client: AnyClient, queue: str, states: list[str]) -> Emptying:
    """The jids of `queue` in `states`; UnknownNameError for a queue never seen."""
    await known.require(client, "queue", queue)
    found: dict[str, list[str]] = {state: [] for state in states}
    seen: set[str] = set()
    pacer = Pacer(most=CHUNK_MOST)
    for part in partitions(client, queue):
        for state in states:
            fresh = [jid for jid in await every_jid(part, state, pacer) if jid not in seen]
            seen.update(fresh)
            found[state] += fresh
    return Emptying(queue, found)


async def cancel_all(client: AnyClient, emptying: Emptying) -> None:
    """Cancel the listed jobs a chunk at a time, each chunk sized so that its call holds the
    server a few milliseconds (`aqless.ops.pacing`); a chunk the server refuses (a job of it
    is a dependency of a job outside it) goes one job at a time, and the jobs refused then
    are tried once more at the end (their dependents may have been cancelled since)."""
    refused: dict[str, str] = {}
    pacer = Pacer(most=CHUNK_MOST)
    with progress(f"emptying {emptying.queue}", emptying.total) as advance:
        for state, jids in emptying.found.items():
            done = 0
            async for chunk in pacer.each(jids):
                done += len(chunk) - await _cancel(client, chunk, refused)
                advance(len(chunk))
            emptying.cancelled[state] = done
    for jid in list(refused):
        again: dict[str, str] = {}
        if await _cancel(client, [jid], again) == 0:
            refused.pop(jid)
            state = next(state for state, jids in emptying.found.items() if jid in jids)
            emptying.cancelled[state] += 1
    emptying.kept = refused


async def _cancel(client: AnyClient, jids: list[str], refused: dict[str, str]) -> int:
    """Cancel `jids` together, else one by one; returns how many were refused (their
    reasons added to `refused`)."""
    if len(jids) > 1:
        try:
            await client.jobs.cancel(*jids)
            return 0
        except aqless.ScriptError:
            pass
    count = 0
    for jid in jids:
        try:
            await client.jobs.cancel(jid)
        except aqless.ScriptError as error:
            refused[jid] = error.detail
            count += 1
    return count


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
    return [state for state in EMPTIED_STATES if state in names]


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
    question = f"cancel {plural(emptying.total, 'job')} of {name} ({emptying.summary()})?"
    if not yes:
        click.confirm(question, abort=True, err=True)

    async def act(client: AnyClient) -> Emptying:
        await cancel_all(client, emptying)
        return emptying

    run_any(act)
    for jid, reason in emptying.kept.items():
        note(f"kept {jid}: {reason}")
    cancelled = sum(emptying.cancelled.values())
    counts = ", ".join(f"{state} {n}" for state, n in emptying.cancelled.items() if n)
    text = f"cancelled {plural(cancelled, 'job')} of {name}" + (f" ({counts})" if counts else "")
    if emptying.kept:
        text += f"; kept {plural(len(emptying.kept), 'job')} that others depend on"
    emit(_document(emptying), text)


def _document(emptying: Emptying) -> dict[str, object]:
    return {
        "queue": emptying.queue,
        "cancelled": {state: emptying.cancelled.get(state, 0) for state in emptying.found},
        "total": sum(emptying.cancelled.values()),
        "kept": emptying.kept,
    }


COMMANDS = (queue,)
