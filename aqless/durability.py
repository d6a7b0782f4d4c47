"""Durable puts: the copies of a put the server must confirm before `put` returns.

The put's script call is followed, in the same round trip and on the same connection, by
``WAITAOF numlocal numreplicas timeout``, which waits until the connection's writes so far
are fsynced to the server's own append-only file (``local``) and to the append-only files of
`replicas` replicas. Redis 7.2+ and Valkey 8+ have WAITAOF.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeAlias

from aqless.errors import ConfigurationError, NotDurableError


@dataclass(frozen=True, slots=True)
class Durability:
    """What a durable put waits for.

    Attributes:
        local: the server's own append-only file fsynced (it needs ``appendonly yes``).
        replicas: how many replicas must have fsynced it to their append-only files.
        timeout: seconds to wait for them; fewer copies by then is a NotDurableError
            (keep it under a `socket_timeout` given to the client).
    """

    local: bool = True
    replicas: int = 0
    timeout: float = 1.0

    def __post_init__(self) -> None:
        if self.replicas < 0:
            raise ConfigurationError(f"durable replicas must be 0 or more, got {self.replicas}")
        if not self.local and not self.replicas:
            raise ConfigurationError("a Durability asks for the local AOF, replicas, or both")
        if not self.timeout > 0:  # WAITAOF's 0 would wait for ever
            raise ConfigurationError(f"durable timeout must be positive, got {self.timeout}")

    def command(self) -> tuple[str | int, ...]:
        """The WAITAOF that confirms the connection's writes so far."""
        milliseconds = max(1, round(self.timeout * 1000))
        return ("WAITAOF", int(self.local), self.replicas, milliseconds)

    def confirm(self, reply: Any, jids: list[str]) -> None:
        """Raise NotDurableError unless WAITAOF's `reply` counts the copies asked for."""
        if isinstance(reply, BaseException):  # e.g. the AOF is off, or an ACL refusal
            raise NotDurableError(jids, str(reply)) from reply
        local, replicas = reply
        if local < int(self.local) or replicas < self.replicas:
            raise NotDurableError(
                jids,
                f"{local} local and {replicas} replica fsyncs within {self.timeout} s, "
                f"asked for {int(self.local)} and {self.replicas}",
            )


#: ``durable=True`` is ``Durability()``: fsynced to the server's own append-only file.
Durable: TypeAlias = bool | Durability | None


def durability(durable: Durable) -> Durability | None:
    """The Durability a `durable` argument asks for; None for none."""
    if isinstance(durable, Durability):
        return durable
    return Durability() if durable else None
