"""A workflow's record: what it did so far, kept in the job's data under ``"_workflow"``
(`KEY`), so that every qless client reads it with the job and the next attempt replays it.

The record is a JSON object::

    {"steps": {"<name>": {"result": ..., "attempt": 2, "at": 1700000000.5, "seconds": 0.2,
                          "failures": 0}},
     "sleeps": {"1": <wake-up time>},
     "waits": {"<signal>#1": {"signal": "<signal>", "until": <time or null>,
                              "taken": {"id": ..., "at": ..., "payload": ...}}},
     "events": ["step:charge", "sleep:1", "wait:approval#1"],
     "values": {"now": [...], "uuid": [...], "random": [...]},
     "versions": {"<change id>": 1},
     "children": {"<name>": {"jid": "<its jid>", "queue": "<its queue>"}},
     "gathers": {"1": {"jids": ["<jid>", ...], "results": [...]}},
     "firsts": {"1": {"jids": ["<jid>", ...], "winner": "<jid>", "result": ...}},
     "parked": {"kind": "sleep" | "signal" | "retry" | "children", "until": <time or null>,
                "signal": "<signal>", "children": ["<jid>", ...], "first": true},
     "compensating": {"error": "<type: text>", "group": "<failure group>"}}

A step counts as done once its ``result`` is in the stored record; an undo is a step named
``undo:<step>``. A race (``ctx.first``) keeps its winner's ``failure`` (group, message)
instead of a ``result`` when the winner failed. ``parked`` says why a
scheduled workflow waits (a workflow waiting for its children is in ``depends``); it is
stale once the job is no longer scheduled (or depends).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aqless.models import JobState

__all__ = ["KEY", "Parked", "Step", "parked", "record_of", "steps"]

#: The job data's key holding the workflow's record.
KEY = "_workflow"


@dataclass(frozen=True, slots=True)
class Parked:
    """Why a workflow waits, scheduled.

    Attributes:
        kind: ``sleep`` (asleep), ``signal`` (waiting for a signal), ``retry`` (a step's
            retry is due later) or ``children`` (waiting for its children, in ``depends``).
        until: when it wakes (epoch seconds), None for a wait without a timeout.
        signal: the signal waited for ("" unless `kind` is ``signal``).
        first: waiting for the first of its children to end (``ctx.first``), not for all.
    """

    kind: str
    until: float | None
    signal: str = ""
    first: bool = False

    def describe(self) -> str:
        """One line: ``waiting for signal 'approval'``, ``asleep``, ``step retry``,
        ``waiting for children``, ``waiting for the first of its children``."""
        if self.kind == "signal":
            return f"waiting for signal {self.signal!r}"
        if self.kind == "children":
            return "waiting for the first of its children" if self.first else "waiting for children"
        return "asleep" if self.kind == "sleep" else "step retry"


@dataclass(frozen=True, slots=True)
class Step:
    """A step of a workflow as its record keeps it.

    Attributes:
        name: the step's name.
        done: whether its result is kept (it will not run again).
        result: its result (None until done).
        attempt: the job's attempt that ran it (None until done, or for a job popped by
            another client).
        at: when it finished (epoch seconds; None until done).
        seconds: how long its function ran.
        failures: how many of its runs raised and were retried by its policy.
    """

    name: str
    done: bool
    result: Any = None
    attempt: int | None = None
    at: float | None = None
    seconds: float | None = None
    failures: int = 0


def steps(data: Any) -> list[Step]:
    """The steps a job's workflow record keeps, in the order they first ran."""
    record = record_of(data)
    kept = record.get("steps") if record is not None else None
    if not isinstance(kept, dict):
        return []
    return [
        Step(
            name=str(name),
            done="result" in entry,
            result=entry.get("result"),
            attempt=entry.get("attempt"),
            at=entry.get("at"),
            seconds=entry.get("seconds"),
            failures=int(entry.get("failures", 0)),
        )
        for name, entry in kept.items()
        if isinstance(entry, dict)
    ]


def record_of(data: Any) -> dict[str, Any] | None:
    """The workflow record in a job's data, or None (not a workflow, or none yet)."""
    if not isinstance(data, dict):
        return None
    record = data.get(KEY)
    return record if isinstance(record, dict) else None


def parked(state: JobState | str, data: Any) -> Parked | None:
    """Why the job of `state` and `data` waits, scheduled (or in depends, for its
    children), as a workflow; None when it is not a parked workflow."""
    record = record_of(data)
    if record is None or state not in (JobState.SCHEDULED, JobState.DEPENDS):
        return None
    marker = record.get("parked")
    if not isinstance(marker, dict) or (state == JobState.DEPENDS) != (
        marker.get("kind") == "children"
    ):
        return None
    until = marker.get("until")
    return Parked(
        kind=str(marker.get("kind", "")),
        until=float(until) if isinstance(until, int | float) else None,
        signal=str(marker.get("signal", "")),
        first=marker.get("first") is True,
    )
