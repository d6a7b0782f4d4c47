"""What the dashboard says of a server that cannot serve it: the condition of a refused read
or a lost link (a 503 page, and a typed error object from the JSON API, on every page), and
the server's memory and persistence on the about page, read from INFO (which a full server
still answers)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aqless._connection.server_checks import FIX, evicts
from aqless.errors import ConnectionLostError, ServerUnavailableError

JSON = dict[str, Any]

#: the condition of a link lost (no server code: the server did not answer)
LOST = "CONNECTION_LOST"

WHAT: dict[str, str] = {
    "OOM": "The server is out of memory (maxmemory reached) and refuses writes, and with "
    "them aqless's calls, until memory is freed or maxmemory raised.",
    "MISCONF": "The server cannot write its data to disk (its last save failed) and "
    "refuses writes until a save succeeds: check its disk and its log.",
    "LOADING": "The server is loading its data after a restart.",
    "READONLY": "The server is a read-only replica (after a failover?).",
    "BUSY": "The server is busy running a long script or function.",
    LOST: "The dashboard lost its link to the server: it is down, restarting, or too slow "
    "to answer.",
}


def described(condition: str) -> str:
    return WHAT.get(condition, f"The server cannot serve now ({condition}).")


def condition_code(error: ConnectionLostError) -> str:
    """The server's code (``LOADING``, ``OOM``...), or `LOST` for a link lost."""
    return error.condition if isinstance(error, ServerUnavailableError) else LOST


def refused(error: ConnectionLostError) -> str:
    """The text of a page whose read the server refused, or whose link was lost."""
    return f"{described(condition_code(error))} The server said: {error}"


def unavailable(error: ConnectionLostError) -> JSON:
    """The JSON API's answer (a 503) to a read the server refused or whose link was lost:
    the text, the condition's code and the error's type (``ServerUnavailableError``,
    ``ServerFullError`` or ``ConnectionLostError``)."""
    return {
        "ok": False,
        "error": refused(error),
        "condition": condition_code(error),
        "type": type(error).__name__,
    }


def condition_of(info: Mapping[str, Any]) -> str | None:
    """``OOM`` or ``MISCONF`` when INFO (memory, persistence) shows the server refuses
    writes, else None."""
    maximum = int(info.get("maxmemory", 0) or 0)
    if maximum and int(info.get("used_memory", 0)) > maximum:
        return "OOM"
    failed_save = info.get("rdb_last_bgsave_status") == "err"
    if failed_save or info.get("aof_last_write_status") == "err":
        return "MISCONF"
    return None


def memory_of(info: Mapping[str, Any]) -> JSON:
    """The about page's memory facts and the server's condition, if any."""
    policy = str(info.get("maxmemory_policy", "unknown"))
    code = condition_of(info)
    condition = None if code is None else {"code": code, "text": described(code)}
    return {
        "used": str(info.get("used_memory_human", "?")),
        "max": str(info.get("maxmemory_human") or "0B") if info.get("maxmemory") else "no limit",
        "policy": policy,
        "evicts": policy != "unknown" and evicts(policy),
        "fix": FIX,
        "condition": condition,
    }
