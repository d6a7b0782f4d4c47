"""Isolated job code: plain job functions run in child processes, which can be stopped.

A worker with ``isolate=True`` (or a handler registered with it) runs such a function in a
child process of its own, as the Ruby qless worker forks one per job; unlike a thread, the
child can be stopped: when the job is taken away, times out, or is cut off by a stop, the
child gets SIGTERM, and SIGKILL if it is still there `KILL_AFTER` seconds later. The slot
stays taken until the child is gone. A child that was stopped or died is not used again.

Children are started with ``spawn`` (a fresh interpreter: no copy of the worker's threads,
event loop or connections) and reused for job after job, one job at a time; with
`max_jobs_per_child` each is replaced after that many jobs, so whatever a job's code leaks
goes with its child. The child gets the function and a copy of the job without its
client (see `detached`), sent as multiprocessing sends its arguments: the function must be
importable by name (defined at module level), and the job's verbs cannot be called from the
child. The child answers in JSON, never in pickle, so what job code makes cannot run code in
the worker: what it returns comes back when it is JSON (else None); what it raises comes
back as its type's name, text and traceback, raised in the worker as that built-in exception
(or `Retry`), else as a stand-in of the same name (its failure group stays the same).
"""

from __future__ import annotations

import builtins
import json
import logging
import multiprocessing
import os
import signal
import threading
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any

import anyio

from aqless._worker.outcomes import Retry
from aqless.errors import ConfigurationError
from aqless.job import Job

__all__ = ["KILL_AFTER", "ChildPool", "ChildProcessDied", "detached"]

logger = logging.getLogger(__name__)

#: Seconds a child gets to exit after SIGTERM before it gets SIGKILL.
KILL_AFTER = 0.5
#: Seconds to wait for a child to be gone after SIGKILL.
_REAP_AFTER_KILL = 5.0
_HELLO = b"ready"


class ChildProcessDied(Exception):
    """The child process running an isolated job exited before it answered (it crashed,
    exited, or was killed by something other than the worker: the OOM killer...). Public
    as ``aqless.ChildProcessDied``, the name a failure's message gives it."""

    __module__ = "aqless"


class ChildTraceback(Exception):
    """Where an isolated job's exception was raised, in its child (its ``__cause__``, shown
    first in the failure's message). Public as ``aqless.ChildTraceback``."""

    __module__ = "aqless"

    def __str__(self) -> str:
        return f'\n"""\n{self.args[0]}"""'


def detached(job: Job) -> Job:
    """A copy of `job` without its client, which pickles: what isolated code receives."""
    copy = Job.__new__(Job)
    for name in Job.__slots__:
        setattr(copy, name, getattr(job, name))
    copy._client = None
    return copy


class _Child:
    __slots__ = ("connection", "jobs", "process")

    def __init__(self, process: BaseProcess, connection: Connection) -> None:
        self.process = process
        self.connection = connection
        self.jobs = 0

    async def receive(self) -> bytes:
        """The child's next message; ChildProcessDied when it exited instead."""
        try:
            await anyio.wait_readable(self.connection.fileno())
            # readable: the message is written in one go, so this does not wait for long
            return self.connection.recv_bytes()
        except (EOFError, OSError):
            pass
        await _exited_within(self.process, KILL_AFTER)
        raise ChildProcessDied(f"the job's process {self.process.pid} {_exit_text(self.process)}")


class ChildPool:
    """Child processes for isolated job code, started as needed, one job at a time each.

    Args:
        max_jobs_per_child: replace a child after it ran this many jobs (None: never).
    """

    def __init__(self, *, max_jobs_per_child: int | None = None) -> None:
        if max_jobs_per_child is not None and max_jobs_per_child < 1:
            raise ConfigurationError(f"max_jobs_per_child must be >= 1, got {max_jobs_per_child!r}")
        self.max_jobs_per_child = max_jobs_per_child
        self._context = multiprocessing.get_context("spawn")
        self._idle: list[_Child] = []
        self._busy: set[_Child] = set()

    @property
    def pids(self) -> list[int]:
        """The process ids of the children, busy or idle."""
        return [child.process.pid or 0 for child in (*self._busy, *self._idle)]

    async def run(self, function: Callable[[Job], Any], job: Job) -> Any:
        """``function(job)`` in a child: its return value, or its exception raised here.
        Cancelled, it stops the child (SIGTERM, then SIGKILL) before it returns."""
        request = (function, detached(job))
        child = await self._take()
        self._busy.add(child)
        try:
            child.connection.send(request)
            reply = await child.receive()
        except BaseException:
            with anyio.CancelScope(shield=True):  # bounded: SIGKILL follows SIGTERM
                await self._stop(child, job.jid)
            raise
        self._busy.discard(child)
        child.jobs += 1
        if self.max_jobs_per_child is not None and child.jobs >= self.max_jobs_per_child:
            with anyio.CancelScope(shield=True):
                await self._stop(child)
        else:
            self._idle.append(child)
        return _outcome(reply)

    async def aclose(self) -> None:
        """Stop every child (the worker's jobs have ended; any still busy is cut off)."""
        children, self._idle = [*self._busy, *self._idle], []
        for child in children:
            await self._stop(child)

    async def _take(self) -> _Child:
        """An idle child that is still alive, or a new one."""
        while self._idle:
            child = self._idle.pop()
            if child.process.exitcode is None:
                return child
            logger.warning("process %d %s while idle", child.process.pid, _exit_text(child.process))
            await self._stop(child)
        return await self._start()

    async def _start(self) -> _Child:
        ours, theirs = self._context.Pipe()
        process = self._context.Process(
            target=_serve, args=(theirs,), name="aqless isolated job", daemon=False
        )
        process.start()
        theirs.close()  # the child's end lives in the child: its exit is our end's EOF
        child = _Child(process, ours)
        try:
            hello = await child.receive()
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self._stop(child)
            raise
        if hello != _HELLO:
            await self._stop(child)
            raise ChildProcessDied(f"the job's process {process.pid} said {hello[:40]!r}")
        logger.debug("started process %d for isolated jobs", process.pid)
        return child

    async def _stop(self, child: _Child, jid: str | None = None) -> None:
        """Stop the child (SIGTERM, SIGKILL after KILL_AFTER s) and reap it."""
        self._busy.discard(child)
        child.connection.close()
        process = child.process
        if process.exitcode is None:
            if jid is not None:
                logger.warning("job %s: stopping its process %d", jid, process.pid)
            process.terminate()
            if not await _exited_within(process, KILL_AFTER):
                logger.warning("process %d ignored SIGTERM: SIGKILL", process.pid)
                process.kill()
                if not await _exited_within(process, _REAP_AFTER_KILL):
                    logger.error("process %d outlived SIGKILL; left behind", process.pid)
                    return
        process.close()


async def _exited_within(process: BaseProcess, seconds: float) -> bool:
    """Whether the process exited (and was reaped) within `seconds`."""
    with anyio.move_on_after(seconds):
        # exitcode polls waitpid, which reaps it; the sentinel is no event for this: a
        # grandchild the job forked may hold it open
        while process.exitcode is None:  # noqa: ASYNC110
            await anyio.sleep(0.005)
    return process.exitcode is not None


def _exit_text(process: BaseProcess) -> str:
    code = process.exitcode
    if code is None:
        return "stopped answering"
    if code < 0:
        return f"was killed by {signal.Signals(-code).name}"
    return f"exited with status {code}"


def _outcome(reply: bytes) -> Any:
    """What the child's JSON reply says: a return value, or an exception raised here."""
    answer = json.loads(reply)
    if answer["returned"]:
        return answer["value"]
    retry = answer.get("retry")
    if retry is not None:
        error: Exception = Retry(retry["delay"], group=retry["group"], message=retry["message"])
    else:
        error = _stand_in(answer["name"], answer["message"], answer.get("module"))
    raise error from ChildTraceback(answer["traceback"])


def _stand_in(name: str, message: str, module: str | None = None) -> Exception:
    """The built-in exception of that name, or one made with the name and the module the
    child's class came from, so that the failure's last line names the job's own class
    (``app.errors.Declined: ...``), not this module; the group stays ``<queue>-<name>``."""
    made: type[Exception] = type(name, (Exception,), {"__module__": module or "builtins"})
    found = getattr(builtins, name, None)
    kind = found if isinstance(found, type) and issubclass(found, Exception) else made
    try:
        return kind(message)
    except Exception:  # a built-in that wants other arguments
        return made(message)


# -- in the child ---------------------------------------------------------------------------


def _serve(connection: Connection) -> None:
    """The child's loop: run the functions the worker sends until it closes the pipe."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C is the worker's
    signal.signal(signal.SIGQUIT, signal.SIG_IGN)
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(target=_exit_with, args=(parent.sentinel,), daemon=True).start()
    connection.send_bytes(_HELLO)
    while True:
        try:
            request = connection.recv()
        except (EOFError, OSError):
            return
        connection.send_bytes(_answer(request))


def _exit_with(parent_sentinel: int) -> None:
    """A child whose worker died (even by SIGKILL) exits, in the middle of a job too."""
    wait([parent_sentinel])
    os._exit(1)


def _answer(request: tuple[Callable[[Job], Any], Job]) -> bytes:
    function, job = request
    try:
        result = function(job)
    except (Exception, SystemExit) as error:
        return _raised(error)
    try:
        return json.dumps({"returned": True, "value": result}).encode()
    except (TypeError, ValueError):  # what is not JSON does not come back
        return json.dumps({"returned": True, "value": None}).encode()


def _raised(error: BaseException) -> bytes:
    answer: dict[str, Any] = {
        "returned": False,
        "name": type(error).__name__,
        "module": type(error).__module__,
        "message": str(error),
        "traceback": "".join(traceback.format_exception(error)),
    }
    if isinstance(error, Retry):
        answer["retry"] = {"delay": error.delay, "group": error.group, "message": error.message}
    return json.dumps(answer).encode()
