"""Acting on every job a search found (`aqless.ops.search`), in slices paced as emptying a
queue (`aqless.ops.pacing`: no slice holds the server more than a few milliseconds): cancel,
retry, requeue, move or delete. The CLI's ``aqless search --retry...`` and the dashboard's
search page both run it.

- **cancel**: stop the jobs not finished (a completed job is left alone);
- **delete**: remove the jobs whatever their state, completed and failed ones included;
- **retry**: put each failed job back into the queue it failed in (others are left alone);
- **requeue**: put each job back into its queue to run again (a completed job has none);
- **move**: put each job into another queue.

A requeue, retry or move keeps the job's data, class, priority and tags. A job the server
refuses (others depend on it, its flow is running, gone since the search) does not stop the
others: the outcome names it with the reason.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final

from aqless import rules
from aqless.errors import AqlessError
from aqless.job import Job
from aqless.ops.durations import plural
from aqless.ops.emptying import CHUNK_MOST, cancel_chunk
from aqless.ops.pacing import Pacer
from aqless.sharding.client import AnyClient

VERBS: Final[tuple[str, ...]] = tuple(rules.RULES["search.action"].choices)
DONE: Final = {
    "cancel": "cancelled",
    "delete": "deleted",
    "retry": "retried",
    "requeue": "requeued",
    "move": "moved",
}


@dataclass
class Bulk:
    """What `act` did: the jids done, those left alone (not in a state the verb takes) and
    those the server refused, each with why."""

    verb: str
    total: int
    queue: str | None = None
    done: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)

    def question(self) -> str:
        """The confirmation asked before: ``retry 1,200 jobs?``"""
        target = f" to {self.queue}" if self.verb == "move" else ""
        return f"{self.verb} {plural(self.total, 'job')}{target}?"

    def outcome(self) -> str:
        """``retried 1,198 jobs; left 2 alone (not failed)``, and the refusals counted."""
        text = f"{DONE[self.verb]} {plural(len(self.done), 'job')}"
        if self.verb == "move":
            text += f" to {self.queue}"
        if self.skipped:
            reasons = sorted(set(self.skipped.values()))
            text += f"; left {plural(len(self.skipped), 'job')} alone ({', '.join(reasons)})"
        if self.refused:
            first = "; ".join(f"{jid}: {why}" for jid, why in list(self.refused.items())[:3])
            text += f"; {plural(len(self.refused), 'job')} refused ({first})"
        return text

    def document(self) -> dict[str, object]:
        return {
            "action": self.verb,
            "queue": self.queue,
            "total": self.total,
            "done": len(self.done),
            "jids": self.done,
            "skipped": self.skipped,
            "refused": self.refused,
        }


def why_not(verb: str, job: Job) -> str | None:
    """Why `verb` leaves `job` alone, or None when it takes it."""
    state = str(job.state)
    if verb == "cancel" and state == "complete":
        return "complete"
    if verb == "retry" and state != "failed":
        return "not failed"
    if verb == "requeue" and not job.queue_name:
        return "complete: in no queue"
    return None


async def _put_back(job: Job, queue: str) -> None:
    await job.move(queue, priority=job.priority, tags=list(job.tags))


async def _act_on(client: AnyClient, bulk: Bulk, jids: list[str]) -> None:
    jobs = await client.jobs.get_many(jids)
    if len(jobs) < len(jids):
        present = {job.jid for job in jobs}
        bulk.refused.update({jid: "gone" for jid in jids if jid not in present})
    taken: list[Job] = []
    for job in jobs:
        reason = why_not(bulk.verb, job)
        if reason is None:
            taken.append(job)
        else:
            bulk.skipped[job.jid] = reason
    if bulk.verb in ("cancel", "delete"):
        refused: dict[str, str] = {}
        await cancel_chunk(client, [job.jid for job in taken], refused)
        bulk.refused.update(refused)
        bulk.done += [job.jid for job in taken if job.jid not in refused]
        return
    outcomes = await asyncio.gather(
        *(_put_back(job, bulk.queue or job.queue_name) for job in taken), return_exceptions=True
    )
    for job, outcome in zip(taken, outcomes, strict=True):
        if isinstance(outcome, AqlessError):
            bulk.refused[job.jid] = str(outcome)
        elif isinstance(outcome, BaseException):
            raise outcome
        else:
            bulk.done.append(job.jid)


def check_move(queue: str | None) -> str:
    """The queue a move puts jobs into, checked by its rule (InvalidValueError)."""
    checked: str = rules.check("queue", queue, "search")
    return checked


def plan(verb: str, jids: Sequence[str], queue: str | None = None) -> Bulk:
    """The record of `verb` (one of `VERBS`) about to be done to `jids` (`queue`: where
    ``move`` puts them), nothing done yet; InvalidValueError for a verb, or a move's queue,
    outside its rule."""
    verb = rules.check("search.action", verb, "search")
    if verb == "move":
        queue = check_move(queue)
    return Bulk(verb, len(dict.fromkeys(jids)), queue if verb == "move" else None)


async def run(
    client: AnyClient,
    bulk: Bulk,
    jids: Sequence[str],
    advance: Callable[[int], object] | None = None,
) -> Bulk:
    """Do `bulk`'s verb to `jids`, a paced slice at a time, `bulk` filled in as each slice is
    done (so that it says what was done should the server go away midway); `advance(n)` is
    told of each slice (a progress bar's)."""
    pacer = Pacer(first=20, most=CHUNK_MOST)
    async for chunk in pacer.each(list(dict.fromkeys(jids))):
        await _act_on(client, bulk, chunk)
        if advance is not None:
            advance(len(chunk))
    return bulk


async def act(
    client: AnyClient,
    verb: str,
    jids: Sequence[str],
    *,
    queue: str | None = None,
    advance: Callable[[int], object] | None = None,
) -> Bulk:
    """Do `verb` (one of `VERBS`) to the jobs `jids`, a paced slice at a time; `queue`: where
    ``move`` puts them. `advance(n)` is told of each slice done (a progress bar's).
    InvalidValueError for a verb, or a move's queue, outside its rule (nothing done).

    Examples:
        ```python
        found = await search.find(client, search.Filters.parse({"tag": ["nightly"]}))
        done = await bulk.act(client, "retry", found.jids)
        print(done.outcome())
        ```
    """
    return await run(client, plan(verb, jids, queue), jids, advance)
