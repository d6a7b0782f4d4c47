"""One job at a time: a worker's outcome and its next pop as one script call.

A worker with a slot or two reports a job's outcome and pops the next job in the same round
trip (see aqless._connection.batching), but as two script calls, and each call costs the
server a fixed part of its own. ``PopAfter`` joins the two into one ``queue.popAfter``
(see popafter.lua), which runs the outcome with its own `now` and arguments and then the
pop, so the server does exactly what the two calls do, and each answers as it would alone:
a refused outcome comes back as its refusal and does not stop the pop; a call that fails as
a whole fails both callers, as a lost round trip does.
"""

from __future__ import annotations

from redis.exceptions import ResponseError

from aqless._connection.lean import refusal
from aqless.scripts.loader import Call, Reply

__all__ = ["OUTCOMES", "POP", "PopAfter"]

#: The worker's pop (aqless._worker.popping), which ``queue.popAfter`` runs after the outcome.
POP = "rateLimit.pop"

#: The outcome commands that ``queue.popAfter`` runs before its pop.
OUTCOMES = frozenset(
    {"job.complete", "job.completeAndRequeue", "job.fail", "job.retry", "job.requeue"}
)


class PopAfter:
    """The batcher's Pairing of an outcome call with the worker's pop behind it."""

    def join(self, first: Call, ordered: Call) -> Call | None:
        command, args = first
        pop, pop_args = ordered
        # the pop's arguments: now, queue, worker, limit and, for aqless's workers, DATA_APART
        if command not in OUTCOMES or pop != POP or len(pop_args) not in (4, 5) or not args:
            return None
        now, *outcome_args = args
        return "queue.popAfter", (*pop_args, command, now, *outcome_args)

    def split(self, reply: Reply) -> tuple[Reply, Reply]:
        if isinstance(reply, BaseException):
            return reply, reply  # nothing ran (e.g. the server refused the call)
        if not isinstance(reply, list) or len(reply) < 3:
            error = ResponseError(f"queue.popAfter: unexpected reply {reply!r}")
            return error, error
        popped = _part(reply[0], reply[1])
        outcome = _part(reply[2], reply[3] if len(reply) > 3 else None)
        return outcome, popped


def _part(status: Reply, reply: Reply) -> Reply:
    """One call's reply: as it came, or the refusal whose text came (as the server's)."""
    return reply if _text(status) == "ok" else refusal(_text(reply))


def _text(part: Reply) -> str:
    return part.decode() if isinstance(part, bytes) else str(part)
