"""One spooled put: a put prepared at the call (checked, its data encoded, its jid chosen),
kept until the server takes it, and written as one line of JSON in a spool file."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from aqless.puts import PreparedPut
from aqless.scripts.loader import Argument
from aqless.scripts.staging import PUT_START

#: Where a put's delay sits among its own arguments: after worker, queue, jid, klass and data.
_DELAY = 5


@dataclass(frozen=True, slots=True)
class SpooledPut:
    """A put waiting in a spool.

    Attributes:
        number: its place in the spool: puts are flushed by increasing number.
        command: the script's command (``queue.putDeduplicated``, or ``queue.putNew`` for a
            put with ``replace=False``).
        jid: the job's id, chosen at the call.
        arguments: the command's arguments, every one text or a number.
        at: the Unix time the job may run from (its delay ends then); None: at once.
        order: the priority it waits at among the client's puts; None when delayed.
        shard: the shard of a sharded deployment it was placed on at the call; None for
            a plain client's put.
    """

    number: int
    command: str
    jid: str
    arguments: tuple[str | int | float, ...]
    at: float | None
    order: float | None
    shard: int | None = None

    @classmethod
    def of(cls, number: int, put: PreparedPut, now: float, shard: int | None = None) -> SpooledPut:
        """The spooled form of `put`, prepared at `now` (placed on `shard`)."""
        arguments = tuple(_plain(argument) for argument in put.arguments)
        delay = float(arguments[_delay_index(put.command)])
        return cls(number, put.command, put.jid, arguments, now + delay if delay else None,
                   put.order, shard)  # fmt: skip

    def arguments_at(self, now: float) -> list[Argument]:
        """The arguments to send at `now`: the delay made what is left of it."""
        arguments: list[Argument] = list(self.arguments)
        if self.at is not None:
            arguments[_delay_index(self.command)] = max(0.0, self.at - now)
        return arguments

    def line(self) -> bytes:
        """The entry as one line of a spool file."""
        entry = {"n": self.number, "c": self.command, "j": self.jid, "a": self.arguments,
                 "t": self.at, "o": self.order}  # fmt: skip
        if self.shard is not None:
            entry["s"] = self.shard
        return json.dumps(entry, separators=(",", ":")).encode() + b"\n"

    @classmethod
    def from_entry(cls, entry: dict[str, Any]) -> SpooledPut:
        """The put a spool file's line (decoded) holds."""
        shard = entry.get("s")
        return cls(int(entry["n"]), str(entry["c"]), str(entry["j"]), tuple(entry["a"]),
                   entry["t"], entry["o"], None if shard is None else int(shard))  # fmt: skip


def _delay_index(command: str) -> int:
    return PUT_START.get(command, 0) + _DELAY


def _plain(argument: Argument) -> str | int | float:
    """An argument as JSON keeps it: the job data's encoded bytes are UTF-8 JSON text."""
    return argument.decode() if isinstance(argument, bytes) else argument
