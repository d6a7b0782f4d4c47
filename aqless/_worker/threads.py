"""Plain job functions in worker threads, and what is left of one that was cut off.

Nothing can stop a thread from outside. When a job's code is cut off (timed out, taken away,
handed back) while its thread still runs, the worker reports the job as it would any other,
but its slot stays taken until the thread returns: `concurrency` bounds the job code that
runs, not only the jobs the server counts. Isolated code (aqless._worker.children) can be stopped.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from typing import Any, Literal

import anyio

__all__ = ["ThreadCall"]

_Phase = Literal["waiting", "running", "cut off", "skipped", "returned"]


class ThreadCall:
    """One call of a job function in a worker thread: ``await to_thread.run_sync(call,
    function, job, abandon_on_cancel=True)``; once that await is cancelled, `cut_off()`
    tells whether the function runs on, and `returned()` waits for it to return."""

    __slots__ = ("_lock", "_loop", "_phase", "_returned", "cut_off_at")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._phase: _Phase = "waiting"
        self._loop = asyncio.get_running_loop()
        self._returned = anyio.Event()
        self.cut_off_at = 0.0

    def __call__(self, function: Callable[[Any], Any], job: Any) -> Any:
        """In the thread: call `function`, unless the caller has given up already."""
        with self._lock:
            if self._phase == "skipped":
                return None
            self._phase = "running"
        try:
            return function(job)
        finally:
            with self._lock:
                cut_off, self._phase = self._phase != "running", "returned"
            if cut_off:  # only a cut-off call is waited for: no loop wake-up otherwise
                with suppress(RuntimeError):  # the loop is closed: nobody waits any more
                    self._loop.call_soon_threadsafe(self._returned.set)

    def cut_off(self) -> bool:
        """The caller stops waiting: whether the function runs on (False: it returned, or
        it had not started and never will)."""
        with self._lock:
            if self._phase == "waiting":
                self._phase = "skipped"
            elif self._phase == "running":
                self._phase = "cut off"
                self.cut_off_at = time.monotonic()
            return self._phase == "cut off"

    async def returned(self) -> None:
        """Wait until a cut-off function returns."""
        await self._returned.wait()
