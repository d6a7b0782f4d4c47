"""Emptying a queue: its jobs in chosen states listed, then cancelled in paced chunks
(`aqless.ops.pacing`), the jobs of each state counted and those the server keeps (others
depend on them) named. The CLI's `queue empty` and the dashboard's "Empty" button both run
this."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import aqless
from aqless.ops import known
from aqless.ops.durations import plural
from aqless.ops.pacing import Pacer
from aqless.sharding.client import AnyClient

#: The states `queue empty` takes jobs from, in the order it cancels them (dependents first,
#: so that a job and the jobs waiting on it can go in separate calls).
EMPTIED_STATES = ("depends", "scheduled", "waiting", "throttled", "stalled", "running", "failed")

#: The most jobs one call lists or cancels, however fast the last one was (a mismeasured
#: call never lets the next hold the server long).
CHUNK_MOST = 100

#: What `queue empty` cancels without --state: the jobs no worker holds and no failure keeps.
DEFAULT_STATES = ("waiting", "scheduled", "depends", "throttled")


def in_order(states: Iterable[str]) -> list[str]:
    """`states` in the order they are cancelled (`EMPTIED_STATES`)."""
    chosen = set(states)
    return [state for state in EMPTIED_STATES if state in chosen]


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

    @property
    def jids(self) -> list[str]:
        return [jid for jids in self.found.values() for jid in jids]

    def summary(self) -> str:
        return ", ".join(f"{state} {len(jids)}" for state, jids in self.found.items() if jids)

    def question(self) -> str:
        """The confirmation asked before: ``cancel 3 jobs of emails (waiting 2, ...)?``"""
        return f"cancel {plural(self.total, 'job')} of {self.queue} ({self.summary()})?"

    def outcome(self) -> str:
        """What was done: ``cancelled 3 jobs of emails (waiting 2, ...)``, and the jobs kept."""
        done = sum(self.cancelled.values())
        counts = ", ".join(f"{state} {n}" for state, n in self.cancelled.items() if n)
        text = f"cancelled {plural(done, 'job')} of {self.queue}" + (
            f" ({counts})" if counts else ""
        )
        if self.kept:
            text += f"; kept {plural(len(self.kept), 'job')} that others depend on"
        return text


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


async def cancel_all(
    client: AnyClient, emptying: Emptying, advance: Callable[[int], object] | None = None
) -> None:
    """Cancel the listed jobs a chunk at a time, each chunk sized so that its call holds the
    server a few milliseconds (`aqless.ops.pacing`); a chunk the server refuses (a job of it
    is a dependency of a job outside it) goes one job at a time, and the jobs refused then
    are tried once more at the end (their dependents may have been cancelled since).
    `advance(n)` is told of each chunk done (a progress bar's)."""
    refused: dict[str, str] = {}
    pacer = Pacer(most=CHUNK_MOST)
    for state, jids in emptying.found.items():
        done = 0
        async for chunk in pacer.each(jids):
            done += len(chunk) - await cancel_chunk(client, chunk, refused)
            if advance is not None:
                advance(len(chunk))
        emptying.cancelled[state] = done
    for jid in list(refused):
        again: dict[str, str] = {}
        if await cancel_chunk(client, [jid], again) == 0:
            refused.pop(jid)
            state = next(state for state, jids in emptying.found.items() if jid in jids)
            emptying.cancelled[state] += 1
    emptying.kept = refused


async def cancel_chunk(client: AnyClient, jids: list[str], refused: dict[str, str]) -> int:
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
