"""Which commands change the deployment, and the audit entry each run of one leaves: who
(the OS user and host), what (the command, its arguments, the options given), when.

`runtime.run` calls `recorded` around every command's work, so a command is audited by
being named in `CHANGES`, not by code of its own."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import suppress
from typing import Final, TypeVar

import click

from aqless.ops import audit
from aqless.sharding.client import AnyClient

T = TypeVar("T")
C = TypeVar("C", bound=AnyClient)

#: The commands that change state, by their path under ``aqless``; a command named with a
#: parameter changes state only when that parameter is given (``track`` alone lists).
CHANGES: Final[dict[str, str | None]] = {
    "put": None,
    "priority": None,
    "track": "jids",
    "untrack": None,
    "tag": None,
    "untag": None,
    "cancel": None,
    "signal": None,
    "pause": None,
    "unpause": None,
    "retry": None,
    "unfail": None,
    "config set": None,
    "config unset": None,
    "config load": None,
    "patterns set-identifier": None,
    "patterns unset-identifier": None,
    "patterns set-priorities": None,
    "recurring update": None,
    "recurring cancel": None,
    "throttle set": None,
    "throttle delete": None,
    "rate-limit set": None,
    "rate-limit delete": None,
    "groups set": None,
    "shards add": None,
    "shards remove": None,
    "shards forget": None,
    "worker quiet": None,
    "worker stop": None,
    "worker resume": None,
}
_LONGEST: Final = 200  # characters of one argument kept in the log
_RECORDED: Final = "aqless.audited"


def command_path(ctx: click.Context) -> str:
    """The command's words after the program's name: ``config set``."""
    names: list[str] = []
    current: click.Context | None = ctx
    while current is not None and current.parent is not None:
        names.append(current.info_name or "")
        current = current.parent
    return " ".join(reversed(names))


def _text(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= _LONGEST else text[: _LONGEST - 1] + "…"


def _values(value: object) -> list[str]:
    if value is None:
        return []
    if isinstance(value, tuple | list):
        return [_text(item) for item in value if item is not None]
    return [_text(value)]


def _given(value: object) -> bool:
    """Whether an option was given a value: a zero is one (``--retries 0``), where a
    comparison with None or False would take it for none."""
    if value is None or value is False:
        return False
    return not isinstance(value, tuple | list) or bool(value)


def action_of(ctx: click.Context) -> audit.AuditEntry | None:
    """The entry a run of this command leaves, or None when the command changes nothing."""
    path = command_path(ctx)
    if path not in CHANGES:
        return None
    needed = CHANGES[path]
    if needed is not None and not ctx.params.get(needed):
        return None
    targets: list[str] = []
    detail: dict[str, str] = {}
    for param in ctx.command.params:
        value = ctx.params.get(param.name or "")
        if isinstance(param, click.Argument):
            targets += _values(value)
        elif _given(value) and value != param.default:
            detail[param.name or ""] = ", ".join(_values(value))
    return audit.entry(audit.operator(), "cli", path, targets, detail)


async def recorded(client: C, work: Callable[[C], Awaitable[T]]) -> T:
    """`work(client)`, then the command's audit entry (once per command run, with the
    error's text as its outcome when `work` failed)."""
    ctx = click.get_current_context(silent=True)
    if ctx is None or ctx.meta.get(_RECORDED) or (entry := action_of(ctx)) is None:
        return await work(client)
    length = audit.length_from_environment()
    try:
        result = await work(client)
    except Exception as error:
        ctx.meta[_RECORDED] = True
        failed = audit.entry(
            entry.who, "cli", entry.action, entry.targets, entry.detail, _text(error) or "error"
        )
        with suppress(Exception):  # the server is gone: the command's own error says so
            await audit.record(client, failed, length=length)
        raise
    ctx.meta[_RECORDED] = True
    await audit.record(client, entry, length=length)
    return result
