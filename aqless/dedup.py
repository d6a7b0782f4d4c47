"""Deduplication: a put that names a dedup id makes a job only when no job holds that id.

The script keeps the id in ``ql:dedup:<id>`` (the jid that holds it) and in the job's
``dedup`` field (see the Lua module ``dedup.lua``). Three modes, as BullMQ has them:

- until the job ends (``Dedup("id")``): later puts are dropped while the job waits, is
  scheduled, depends, runs...; completing, failing or cancelling it frees the id;
- for a TTL (``Dedup("id", ttl=60)``): later puts are dropped for `ttl` seconds, whatever
  becomes of the job;
- debounce (``Dedup("id", ttl=2, debounce=True)``): a put within `ttl` seconds of the last
  one replaces the pending job's data and delay (the last data wins) and starts the TTL
  again; once the job has started, the put makes a new job, which then holds the id.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from aqless.errors import ConfigurationError, ScriptError

if TYPE_CHECKING:
    from aqless.client import Client

__all__ = ["COMMAND", "Dedup", "DedupOption", "PutResult", "dedup_id", "dedup_of"]

#: The script's command for a put with a dedup id.
COMMAND = "queue.putDeduplicated"

Outcome: TypeAlias = Literal["put", "deduplicated", "debounced"]


@dataclass(frozen=True, slots=True)
class Dedup:
    """A put's deduplication: its `id`, and `ttl` seconds for the TTL and debounce modes
    (none: until the job ends). Ids share one namespace per key prefix: put the queue's
    name in the id to keep queues apart."""

    id: str
    ttl: float | None = None
    debounce: bool = False

    def __post_init__(self) -> None:
        if not self.id:
            raise ConfigurationError("a dedup id must be a non-empty string")
        if self.ttl is not None and not (math.isfinite(self.ttl) and self.ttl > 0):
            raise ConfigurationError(f"a dedup ttl must be a positive number, not {self.ttl!r}")
        if self.debounce and self.ttl is None:
            raise ConfigurationError("a debounced put needs a ttl (the debounce window)")

    @property
    def mode(self) -> Literal["job", "ttl", "debounce"]:
        if self.debounce:
            return "debounce"
        return "job" if self.ttl is None else "ttl"

    def arguments(self) -> list[str | float]:
        """What goes before put's arguments in the script's call."""
        return [self.id, self.mode, 0 if self.ttl is None else self.ttl]


#: `put`'s `dedup`: a Dedup, or an id alone (held until the job ends).
DedupOption: TypeAlias = Dedup | str | None


def dedup_of(option: DedupOption) -> Dedup | None:
    """The Dedup a `dedup=` option names."""
    return Dedup(option) if isinstance(option, str) else option


@dataclass(frozen=True, slots=True)
class PutResult:
    """What a put did: `jid` is the job that now holds the put (the existing one when the
    put was deduplicated); `deduplicated` when no new job was made (then `debounced` when
    the existing job took the put's data and delay)."""

    jid: str
    deduplicated: bool = False
    debounced: bool = False

    @classmethod
    def from_reply(cls, command: str, reply: Any) -> PutResult:
        """The result of a put: a jid (plain put) or the script's ``[jid, outcome]``."""
        if isinstance(reply, str):
            return cls(reply)
        if isinstance(reply, list) and len(reply) == 2 and all(isinstance(r, str) for r in reply):
            jid, outcome = reply
            if outcome in ("put", "deduplicated", "debounced"):
                return cls(jid, outcome != "put", outcome == "debounced")
        raise ScriptError(command, f"expected a jid, got {reply!r}")


async def dedup_id(client: Client, jid: str) -> str | None:
    """The dedup id a job was put with, if any (it is not part of the job object)."""
    value = await client.protocol.call("job.dedup", jid)
    return value if isinstance(value, str) else None
