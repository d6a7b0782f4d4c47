"""One put as the outbox keeps it: checked and encoded at the call (the same checks as
`Queue.put`: the data must be JSON, a typed handler's data must fit, the options must be
known and in range), its jid chosen then, and its delay made a time to run from."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from aqless.codecs import PayloadCodec
from aqless.puts import (
    DEDUP_COMMAND,
    Dedup,
    JobClass,
    PutOptions,
    PutRequest,
    dedup_of,
    prepare_put,
)

#: The worker name the checks run under: a put in the outbox belongs to no worker yet.
_NO_WORKER = "aqless-outbox"
#: The options prepare_put sends JSON-encoded (decoded again for the outbox's own JSON).
_LISTED = frozenset({"tags", "depends", "throttles", "rate_limits"})


@dataclass(frozen=True, slots=True)
class OutboxRecord:
    """A put waiting in the outbox: one row of the outbox table.

    Attributes:
        jid: the job's id, chosen at the call; the relay puts the job under it.
        queue: the queue the job goes to.
        klass: the job's class name (``module.qualname``).
        data: the job's data, as JSON text.
        options: the put's options as JSON text (priority, retries, tags, depends,
            throttles, rate_limits, dedup, and `at`: the Unix time the job may run from).
        created_at: the Unix time of the call.

    Examples:
        ```python
        rows = session.execute(select(outbox_table)).mappings().all()  # OutboxRecord.row()s
        ```
    """

    jid: str
    queue: str
    klass: str
    data: str
    options: str
    created_at: float

    def row(self) -> dict[str, Any]:
        """The values of the row the writers insert, by column.

        Examples:
            ```python
            connection.execute(insert(outbox_table), [record.row()])
            ```
        """
        return {
            "jid": self.jid,
            "queue": self.queue,
            "klass": self.klass,
            "data": self.data,
            "options": self.options,
            "created_at": self.created_at,
            "attempts": 0,
            "next_attempt_at": self.created_at,
        }


def record_put(
    queue: str,
    klass: JobClass,
    data: Any,
    options: PutOptions,
    *,
    clock: Callable[[], float],
    codec: PayloadCodec | None = None,
) -> OutboxRecord:
    """The outbox row of ``queue.put(klass, data, **options)`` (its data stored through
    `codec`, as a client's put stores it), or the error that put would
    raise for it (TypeError, InvalidArgumentError, ConfigurationError, PayloadError,
    JobDataError) before anything is written."""
    now = clock()
    prepared = prepare_put(
        klass, data, options, worker=_NO_WORKER, queue=queue, clock=lambda: now, codec=codec
    )
    offset = 3 if prepared.command == DEDUP_COMMAND else 0
    arguments = prepared.arguments[offset:]
    jid, name, encoded, delay = arguments[2], arguments[3], arguments[4], arguments[5]
    stored: dict[str, Any] = {}
    extra = arguments[6:]
    for option, value in zip(extra[::2], extra[1::2], strict=True):
        key = str(option)
        stored[key] = json.loads(str(value)) if key in _LISTED else value
    if delay:
        stored["at"] = now + float(delay)
    dedup = dedup_of(options.get("dedup"))
    if dedup is not None:
        stored["dedup"] = {"id": dedup.id, "ttl": dedup.ttl, "debounce": dedup.debounce}
    text = encoded.decode() if isinstance(encoded, bytes) else str(encoded)
    return OutboxRecord(
        jid=str(jid),
        queue=queue,
        klass=str(name),
        data=text,
        options=json.dumps(stored, separators=(",", ":")),
        created_at=now,
    )


def request_of(
    jid: str,
    klass: str,
    data: str,
    options: str,
    *,
    now: float,
    fallback_dedup: Dedup | None,
) -> PutRequest:
    """The put a row asks for, as the relay makes it at `now`: its own jid, a delay that
    ends at its `at`, and its own dedup id or else `fallback_dedup`."""
    stored: Mapping[str, Any] = json.loads(options)
    at = stored.get("at")
    own = stored.get("dedup")
    dedup = fallback_dedup if own is None else Dedup(own["id"], own["ttl"], own["debounce"])
    return PutRequest(
        klass,
        json.loads(data),
        jid=jid,
        priority=stored.get("priority"),
        delay=None if at is None else max(0.0, float(at) - now),
        tags=stored.get("tags"),
        retries=stored.get("retries"),
        depends=stored.get("depends"),
        throttles=stored.get("throttles"),
        dedup=dedup,
        rate_limits=stored.get("rate_limits"),
    )
