"""The audit log: who changed what, and when, from the dashboard or the ``aqless`` command.

Entries are JSON objects in one Redis list per deployment, ``<prefix>aqless:audit``
(``ql:aqless:audit`` by default: no qless key starts with ``ql:aqless:``), newest first and
trimmed to a bounded length on every write. A sharded deployment keeps its log on its first
shard.
"""

from __future__ import annotations

import getpass
import json
import os
import socket
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Final, Literal

from aqless._connection.protocol import raising_aqless_errors
from aqless.client import Client
from aqless.errors import ConfigurationError
from aqless.sharding.client import AnyClient

KEY_SUFFIX: Final = "aqless:audit"
#: How many entries the log keeps when nobody says otherwise (``AQLESS_AUDIT_LENGTH``).
DEFAULT_LENGTH: Final = 10_000
LENGTH_VARIABLE: Final = "AQLESS_AUDIT_LENGTH"

Via = Literal["web", "cli"]


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One state-changing action: `who` did `action` to `targets` at `at` (epoch seconds)
    through `via`; `outcome` is ``ok`` or the refusal's text; `detail` holds its other
    inputs."""

    at: float
    who: str
    via: Via
    action: str
    targets: tuple[str, ...] = ()
    detail: Mapping[str, str] = field(default_factory=dict)
    outcome: str = "ok"

    def document(self) -> dict[str, Any]:
        found = asdict(self)
        found["targets"] = list(self.targets)
        found["detail"] = dict(self.detail)
        return found

    @classmethod
    def parse(cls, raw: str | bytes) -> AuditEntry:
        """An entry read back; fields another writer left out get their defaults."""
        try:
            found = json.loads(raw)
            return cls(
                at=float(found.get("at", 0)),
                who=str(found.get("who", "")),
                via="web" if found.get("via") == "web" else "cli",
                action=str(found.get("action", "")),
                targets=tuple(str(target) for target in found.get("targets", ())),
                detail={str(k): str(v) for k, v in dict(found.get("detail", {})).items()},
                outcome=str(found.get("outcome", "ok")),
            )
        except (ValueError, TypeError, AttributeError):
            text = raw.decode(errors="replace") if isinstance(raw, bytes) else raw
            return cls(at=0, who="", via="cli", action="(unreadable)", detail={"raw": text})


def length_from_environment() -> int:
    """``AQLESS_AUDIT_LENGTH`` (a whole number >= 1), else `DEFAULT_LENGTH`."""
    raw = os.environ.get(LENGTH_VARIABLE, "").strip()
    if not raw:
        return DEFAULT_LENGTH
    return checked_length(raw)


def checked_length(raw: object) -> int:
    try:
        length = int(str(raw))
    except ValueError:
        length = 0
    if length < 1:
        raise ConfigurationError(f"the audit log's length must be a whole number >= 1: {raw!r}")
    return length


def log_client(client: AnyClient) -> Client:
    """The plain client whose namespace holds the log: a sharded deployment's first shard."""
    return client.servers[0]


def key(client: AnyClient) -> str:
    return log_client(client).prefix + KEY_SUFFIX


def operator() -> str:
    """Who runs this process, as ``user@host``."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = str(os.getuid()) if hasattr(os, "getuid") else "unknown"
    return f"{user}@{socket.gethostname()}"


async def record(client: AnyClient, entry: AuditEntry, *, length: int = DEFAULT_LENGTH) -> None:
    """Add `entry` to the log, which then keeps its newest `length` entries."""
    plain = log_client(client)
    name = key(client)
    text = json.dumps(entry.document(), ensure_ascii=False, separators=(",", ":"))
    # two calls, not a pipeline: redis-py words a pipeline's refusal so that a full or
    # loading server's condition no longer leads its text, and the typed error needs it there
    with raising_aqless_errors("audit.record"):
        await plain.redis.lpush(name, text)
        await plain.redis.ltrim(name, 0, length - 1)


def entry(
    who: str,
    via: Via,
    action: str,
    targets: Sequence[str] = (),
    detail: Mapping[str, str] | None = None,
    outcome: str = "ok",
    *,
    at: float | None = None,
) -> AuditEntry:
    return AuditEntry(
        at=time.time() if at is None else at,
        who=who,
        via=via,
        action=action,
        targets=tuple(targets),
        detail=dict(detail or {}),
        outcome=outcome,
    )


async def read(client: AnyClient, *, limit: int = 100, offset: int = 0) -> list[AuditEntry]:
    """The newest `limit` entries after the newest `offset`, newest first."""
    if limit < 1:
        return []
    start = max(0, offset)
    with raising_aqless_errors("audit.read"):
        raw: list[str | bytes] = await log_client(client).redis.lrange(
            key(client), start, start + limit - 1
        )
    return [AuditEntry.parse(item) for item in raw]


async def page(client: AnyClient, *, limit: int, offset: int = 0) -> tuple[list[AuditEntry], int]:
    """`read`'s entries, and how many the log holds (one round trip more)."""
    entries = await read(client, limit=limit, offset=offset)
    with raising_aqless_errors("audit.read"):
        total: int = await log_client(client).redis.llen(key(client))
    return entries, total
