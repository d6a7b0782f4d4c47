"""Where every task and thread of the process is, for a person debugging a stuck worker."""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import traceback
from typing import Any


def await_chain(coroutine: Any) -> str:
    """The chain of awaits a suspended coroutine is in, outermost first."""
    lines: list[str] = []
    while coroutine is not None:
        frame = getattr(coroutine, "cr_frame", None) or getattr(coroutine, "gi_frame", None)
        if frame is not None:
            code = frame.f_code
            lines.append(f'  File "{code.co_filename}", line {frame.f_lineno}, in {code.co_name}')
        coroutine = getattr(coroutine, "cr_await", None) or getattr(coroutine, "gi_yieldfrom", None)
    return "\n".join(lines) or "  (running or not started)"


def log_all(logger: logging.Logger) -> None:
    """Log where every asyncio task waits and every other thread runs."""
    for task in sorted(asyncio.all_tasks(), key=lambda task: task.get_name()):
        logger.warning("task %s:\n%s", task.get_name(), await_chain(task.get_coro()))
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    for ident, frame in sys._current_frames().items():
        if ident != threading.get_ident():
            stack = "".join(traceback.format_stack(frame))
            logger.warning("thread %s:\n%s", names.get(ident, ident), stack)
