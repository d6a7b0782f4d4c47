"""A worker's outcomes and its next pop as one script call.

A worker reports its jobs' outcomes and pops the next jobs in the same round trip (see
aqless._connection.batching), but each as a script call of its own, and each call costs the
server a fixed part of its own. ``PopAfter`` joins them: one outcome and the pop into one
``queue.popAfter`` (see popafter.lua), several into one ``jobs.outcomes``, which runs each
outcome with its own `now` and arguments, in order, then the pop, so the server does what
the calls do one after the other (the outcomes' daily statistics written once per queue),
and each answers as it would alone: a refused outcome comes back as its refusal and stops
neither the other outcomes nor the pop; a call that fails as a whole fails every caller, as
a lost round trip does.
"""

from __future__ import annotations

from collections.abc import Sequence

from redis.exceptions import ResponseError

from aqless.scripts.loader import Argument, Call, Reply, answered

__all__ = ["OUTCOMES", "POP", "PopAfter"]

#: The worker's pop (aqless._worker.popping), which ``queue.popAfter`` runs after the outcome.
POP = "rateLimit.pop"

#: The outcome commands that ``queue.popAfter`` and ``jobs.outcomes`` run before their pop.
OUTCOMES = frozenset(
    {"job.complete", "job.completeAndRequeue", "job.fail", "job.retry", "job.requeue"}
)

#: The frame of a run of plain completes in ``jobs.outcomes`` (popafter.lua): worker, queue,
#: count, then each one's now, jid and attempt (3 arguments a job instead of 11).
KEPT_COMPLETES = "job.complete*"


class PopAfter:
    """The batcher's Pairing of outcome calls with the worker's pop behind them."""

    def joins(self, first: Call) -> bool:
        """Whether `first` may go in a joined call: an outcome, with its `now`."""
        return first[0] in OUTCOMES and bool(first[1])

    def join(self, first: Call, ordered: Call) -> Call | None:
        """One outcome and the pop as one ``queue.popAfter``, or None."""
        return self.join_many((first,), ordered)

    def join_many(self, firsts: Sequence[Call], ordered: Call | None) -> Call | None:
        """The outcomes (each `joins`) and the pop, if any, as one call, or None."""
        if not firsts or not all(map(self.joins, firsts)):
            return None
        if ordered is None:  # no pop: queue, worker and limit ''; the first outcome's now
            pop_args: Sequence[Argument] = (firsts[0][1][0], "", "", "")
        else:
            pop, pop_args = ordered
            # the pop's: now, queue, worker, limit and, for aqless's workers, DATA_APART
            if pop != POP or len(pop_args) not in (4, 5):
                return None
        if len(firsts) == 1 and ordered is not None:
            command, (now, *outcome_args) = firsts[0]
            return "queue.popAfter", (*pop_args, command, now, *outcome_args)
        framed: list[Argument] = list(pop_args)
        head: tuple[Argument, Argument] | None = None  # a run of plain completes' worker, queue
        jobs: list[Argument] = []  # and each one's now, jid and attempt
        for command, (now, *outcome_args) in firsts:
            plain = _plain_complete(command, outcome_args)
            if head is not None and (plain is None or (plain[1], plain[2]) != head):
                framed += (KEPT_COMPLETES, *head, len(jobs) // 3, *jobs)
                head, jobs = None, []
            if plain is None:
                framed += (command, now, len(outcome_args), *outcome_args)
            else:
                head = (plain[1], plain[2])
                jobs += (now, plain[0], plain[3])
        if head is not None:
            framed += (KEPT_COMPLETES, *head, len(jobs) // 3, *jobs)
        return "jobs.outcomes", tuple(framed)

    def split(self, reply: Reply) -> tuple[Reply, Reply]:
        """The outcome's reply and the pop's, from ``queue.popAfter``'s."""
        outcome, popped = self.split_many(reply, 1)
        return outcome, popped

    def split_many(self, reply: Reply, count: int) -> list[Reply]:
        """The `count` outcomes' replies, then the pop's, from the joined call's (both
        commands answer {pop's status, pop's reply, then each outcome's status and reply})."""
        if isinstance(reply, BaseException):
            return [reply] * (count + 1)  # nothing ran (e.g. the server refused the call)
        if not isinstance(reply, list) or len(reply) < 1 + 2 * count:
            error = ResponseError(f"joined outcomes: unexpected reply {reply!r}")
            return [error] * (count + 1)
        replies = [answered(reply[i], _at(reply, i + 1)) for i in range(2, 2 + 2 * count, 2)]
        return [*replies, answered(reply[0], reply[1])]


def _plain_complete(
    command: str, args: Sequence[Argument]
) -> tuple[Argument, Argument, Argument, Argument] | None:
    """The jid, worker, queue and attempt of aqless's worker's plain complete (the job's
    data left as it was: ``jid worker queue '' keep_data 1 attempt n``), else None."""
    if command != "job.complete" or len(args) != 8:
        return None
    jid, worker, queue, data, keep, one, fence, attempt = args
    if data != "" or keep != "keep_data" or str(one) != "1" or fence != "attempt":
        return None
    return jid, worker, queue, attempt


def _at(reply: list[Reply], index: int) -> Reply:
    return reply[index] if index < len(reply) else None
