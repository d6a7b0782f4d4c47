"""Job progress: how far a running job's code got (a fraction from 0 to 1 and a message),
reported by the worker holding the job, read back by anyone.

The script keeps the last report as extra fields of the job hash and publishes it on
``ql:progress`` (progress.lua). In a worker, reports are coalesced (`Coalescer`): while one
is on its way, later ones wait and only the newest is sent after it, so a loop that reports
a thousand times a second costs a round trip at a time, and the last report lands before
the job's outcome is sent.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from aqless.errors import ConnectionLostError, InvalidArgumentError, ScriptError

__all__ = ["MESSAGE_LIMIT", "Coalescer", "Progress", "checked_report"]

logger = logging.getLogger(__name__)

#: The longest progress message, in bytes of UTF-8 (the script refuses longer ones).
MESSAGE_LIMIT: Final = 1024

Send = Callable[[float, str], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Progress:
    """A job's last progress report.

    Attributes:
        fraction: how far the job got, from 0 to 1.
        message: what the job's code said with it ('' when nothing).
        at: when it was reported (a Unix time).

    Examples:
        ```python
        progress = (await client.jobs.progress(jid)).get(jid)
        if progress is not None:
            print(f"{progress.fraction:.0%} {progress.message}")
        ```
    """

    fraction: float
    message: str
    at: float

    @classmethod
    def from_json(cls, fields: Mapping[str, Any]) -> Progress:
        """Decode a stored progress report (`Jobs.progress` does it).

        Examples:
            ```python
            report = aqless.Progress.from_json({"fraction": 0.5, "message": "half", "at": 0})
            assert report.fraction == 0.5
            ```
        """
        return cls(
            fraction=float(fields.get("fraction", 0)),
            message=str(fields.get("message", "")),
            at=float(fields.get("at", 0)),
        )


def checked_report(fraction: object, message: object) -> tuple[float, str]:
    """The report as the script takes it, or InvalidArgumentError (before anything is sent)."""
    if isinstance(fraction, bool) or not isinstance(fraction, int | float):
        raise InvalidArgumentError("job.progress", f"a fraction must be a number, got {fraction!r}")
    if not (math.isfinite(fraction) and 0 <= fraction <= 1):
        raise InvalidArgumentError(
            "job.progress", f"a fraction must be from 0 to 1, got {fraction}"
        )
    if not isinstance(message, str):
        raise InvalidArgumentError("job.progress", f"a message must be a string, got {message!r}")
    if len(message.encode("utf-8", errors="surrogatepass")) > MESSAGE_LIMIT:
        raise InvalidArgumentError(
            "job.progress", f"a progress message must be at most {MESSAGE_LIMIT} bytes"
        )
    return float(fraction), message


class Coalescer:
    """A running job's reports in its worker: `report` returns at once; one report is on its
    way at a time and only the newest waiting one goes next. `flushed` waits until the last
    has landed; `discard` drops what waits (the job was taken away).

    A report the server refuses (the job is no longer this worker's) or that a dropped
    connection lost is logged and dropped: the job's own outcome tells what became of it.
    """

    __slots__ = ("_jid", "_send", "_task", "_waiting")

    def __init__(self, jid: str, send: Send) -> None:
        self._jid = jid
        self._send = send
        self._waiting: tuple[float, str] | None = None
        self._task: asyncio.Task[None] | None = None

    def report(self, fraction: float, message: str) -> None:
        self._waiting = (fraction, message)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        while self._waiting is not None:
            (fraction, message), self._waiting = self._waiting, None
            try:
                await self._send(fraction, message)
            except (ScriptError, ConnectionLostError) as error:
                logger.warning("progress of job %s not recorded: %s", self._jid, error)

    async def flushed(self) -> None:
        """Wait until the newest report has landed (or was refused)."""
        task = self._task
        if task is not None:
            await asyncio.shield(task)

    def discard(self) -> None:
        self._waiting = None
        if self._task is not None:
            self._task.cancel()
