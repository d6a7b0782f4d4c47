"""What a batch is made of and what reading one gives: the callbacks' specs, the checks that
refuse a bad batch before anything is sent, and the typed record of a batch's totals."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias

from aqless.errors import InvalidArgumentError, PayloadError
from aqless.puts import JobClass, PutRequest, checked_queue, class_name, new_jid

__all__ = [
    "COMMAND",
    "DEFAULT_TTL",
    "KINDS",
    "MEMBER_LIMIT",
    "Batch",
    "BatchCallback",
    "BatchMember",
    "BatchPage",
    "CallbackKind",
    "CallbackState",
    "callbacks_text",
    "checked_members",
    "checked_ttl",
]

#: The script's command that writes a batch and its members.
COMMAND: Final = "batch.put"
#: The most members one batch may have (the script refuses more).
MEMBER_LIMIT: Final = 10_000
#: Seconds a finished batch's record is kept by default (a day).
DEFAULT_TTL: Final = 86_400.0

CallbackKind: TypeAlias = Literal["success", "complete", "death"]
KINDS: Final[tuple[CallbackKind, ...]] = ("success", "complete", "death")

BatchMember: TypeAlias = tuple[str, PutRequest]
"""A member of a batch: the queue it is put into, and its put (`PutRequest`)."""


@dataclass(frozen=True, slots=True)
class BatchCallback:
    """A callback job of a batch: an ordinary job of class `klass` put into `queue` when its
    condition is met, with `data` (a JSON object; None for an empty one) and the key
    ``batch`` added: ``{"id", "event", "description", "total", "pending", "done",
    "failed"}``.

    Attributes:
        klass: the callback job's class (a class, a function or a dotted name).
        queue: the queue it is put into.
        data: its data, a JSON object (default None: an empty one).

    Examples:
        ```python
        notify = aqless.BatchCallback("app.jobs.notify", "notifications", {"user": 42})
        bid = await client.batches.put(members, on_complete=notify)
        ```
    """

    klass: JobClass
    queue: str
    data: Mapping[str, Any] | None = None

    def spec(self, jid: str) -> dict[str, Any]:
        """The callback as the script stores it (`Batches.put` makes it).

        Raises:
            InvalidArgumentError: its class cannot be named by a worker, or its data is no
                JSON object or has a ``batch`` key already.
            InvalidValueError: its queue is outside the rule ``queue``.

        Examples:
            ```python
            spec = notify.spec("the-callback-jid")
            ```
        """
        name = callback_class_name(self.klass)
        checked_name(self.queue)
        data = dict(self.data or {})
        if not isinstance(self.data, Mapping | None):
            raise InvalidArgumentError(COMMAND, f"callback data must be a mapping: {self.data!r}")
        if "batch" in data:
            raise InvalidArgumentError(COMMAND, "callback data has a 'batch' key of its own")
        return {"klass": name, "queue": self.queue, "jid": jid, "data": data}


def checked_name(queue: str) -> str:
    """A queue's name, kept to the rule `queue` (InvalidValueError)."""
    return checked_queue(queue, COMMAND)


def callback_class_name(klass: JobClass) -> str:
    """The class name a callback job is put with: refused when a worker could not import it
    (a lambda, a class or function defined inside a function)."""
    name = class_name(klass)
    if "<" in name:  # <lambda>, <locals>
        raise InvalidArgumentError(
            COMMAND, f"a callback's class must be importable by its name; {name!r} is not"
        )
    return name


def callbacks_text(callbacks: Mapping[CallbackKind, BatchCallback | None]) -> str:
    """The JSON object of the callbacks given, each with a new jid."""
    specs = {kind: c.spec(new_jid()) for kind, c in callbacks.items() if c is not None}
    try:
        return json.dumps(specs, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as error:
        raise PayloadError(f"callback data cannot be encoded as JSON: {error}") from error


def checked_members(members: Iterable[BatchMember]) -> list[BatchMember]:
    """The members as a list, refused (InvalidArgumentError) when there are none or more than
    `MEMBER_LIMIT`, when one is not a (queue, PutRequest) pair, names a jid twice or asks for
    deduplication (a member must be a new job)."""
    listed = list(members)
    if not listed:
        raise InvalidArgumentError(COMMAND, "a batch needs at least one member")
    if len(listed) > MEMBER_LIMIT:
        raise InvalidArgumentError(
            COMMAND, f"a batch has at most {MEMBER_LIMIT} members, not {len(listed)}"
        )
    jids: set[str] = set()
    for member in listed:
        given: object = member  # whatever an untyped caller passed
        if not (isinstance(given, tuple) and len(given) == 2):
            raise InvalidArgumentError(
                COMMAND, f"a member is a (queue, PutRequest), not {member!r}"
            )
        queue, request = member
        checked_name(queue)
        if not isinstance(request, PutRequest):
            raise InvalidArgumentError(COMMAND, f"a member's put is a PutRequest, not {request!r}")
        if request.dedup is not None:
            raise InvalidArgumentError(COMMAND, "a batch member takes no dedup: it is a new job")
        if request.jid is not None:
            if request.jid in jids:
                raise InvalidArgumentError(COMMAND, f"member jid given twice: {request.jid}")
            jids.add(request.jid)
    return listed


def checked_ttl(ttl: float) -> float:
    """A batch's ttl in seconds, refused (InvalidArgumentError) unless a positive number."""
    given: object = ttl  # whatever an untyped caller passed
    if isinstance(given, bool) or not isinstance(given, int | float) or not math.isfinite(given):
        raise InvalidArgumentError(COMMAND, f"a batch's ttl must be a number, not {ttl!r}")
    if ttl <= 0:
        raise InvalidArgumentError(COMMAND, f"a batch's ttl must be positive, not {ttl!r}")
    return float(ttl)


@dataclass(frozen=True, slots=True)
class CallbackState:
    """A callback of a batch as stored: its class, queue and jid, and whether it was put."""

    klass: str
    queue: str
    jid: str
    fired: bool


@dataclass(frozen=True, slots=True)
class Batch:
    """A batch's record and live totals (``client.batches.get(bid)``).

    Attributes:
        id: the batch's id.
        description: what the caller said it is.
        created: when it was put (a Unix time).
        ttl: seconds its record is kept once finished.
        total: its members.
        pending: members that have not ended yet.
        done: members that completed.
        failed: members that failed for good or were cancelled.
        finished: when its last member ended; None while some are pending.
        expires: when its record goes (finished + ttl); None while some are pending.
        callbacks: its callbacks by kind (success, complete, death).

    Examples:
        ```python
        batch = await client.batches.get(bid)
        if batch is not None and batch.state == "succeeded":
            ...
        ```
    """

    id: str
    description: str
    created: float
    ttl: float
    total: int
    pending: int
    done: int
    failed: int
    finished: float | None
    expires: float | None
    callbacks: Mapping[str, CallbackState]

    @property
    def succeeded(self) -> bool:
        """Every member completed."""
        return self.pending == 0 and self.failed == 0

    @property
    def state(self) -> Literal["running", "succeeded", "failed"]:
        """running while members are pending; then succeeded, or failed if any failed."""
        if self.pending:
            return "running"
        return "succeeded" if self.failed == 0 else "failed"

    @property
    def fraction(self) -> float:
        """The share of members that ended, from 0 to 1."""
        return (self.total - self.pending) / self.total if self.total else 1.0

    @classmethod
    def from_json(cls, fields: Mapping[str, Any]) -> Batch:
        """Decode the script's batch record (`Batches.get` does it with its reply).

        Examples:
            ```python
            batch = aqless.Batch.from_json({"id": "b-1", "total": 4, "pending": 1})
            assert batch.fraction == 0.75
            ```
        """
        callbacks = fields.get("callbacks") or {}
        return cls(
            id=str(fields["id"]),
            description=str(fields.get("description") or ""),
            created=float(fields.get("created") or 0),
            ttl=float(fields.get("ttl") or 0),
            total=int(fields.get("total") or 0),
            pending=int(fields.get("pending") or 0),
            done=int(fields.get("done") or 0),
            failed=int(fields.get("failed") or 0),
            finished=_time(fields.get("finished")),
            expires=_time(fields.get("expires")),
            callbacks={
                str(kind): CallbackState(
                    klass=str(spec.get("klass", "")),
                    queue=str(spec.get("queue", "")),
                    jid=str(spec.get("jid", "")),
                    fired=bool(spec.get("fired")),
                )
                for kind, spec in callbacks.items()
                if isinstance(spec, Mapping)
            },
        )

    def to_json(self) -> dict[str, Any]:
        """The record as plain JSON values (the CLI's --json, the dashboard).

        Examples:
            ```python
            print(json.dumps(batch.to_json()))
            ```
        """
        return {
            "id": self.id,
            "description": self.description,
            "created": self.created,
            "ttl": self.ttl,
            "total": self.total,
            "pending": self.pending,
            "done": self.done,
            "failed": self.failed,
            "finished": self.finished,
            "expires": self.expires,
            "callbacks": {
                kind: {"klass": c.klass, "queue": c.queue, "jid": c.jid, "fired": c.fired}
                for kind, c in self.callbacks.items()
            },
        }


def _time(value: Any) -> float | None:
    return None if value is None else float(value)


@dataclass(frozen=True, slots=True)
class BatchPage:
    """A page of batches, newest first, and how many batches there are."""

    total: int
    batches: Sequence[Batch]
