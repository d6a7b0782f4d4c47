"""The supervisor ``aqless-run --processes P`` becomes: it keeps P worker processes running.

Each worker is ``python -m aqless.run <the same arguments> --child``, in a session of its own
(so a terminal's Ctrl-C reaches only the supervisor, which passes it on once), started with
the control signals blocked until it obeys them (one sent meanwhile waits instead of killing
it). The worker's exit status says what to do next:

- ``EXIT_RECYCLE`` (75): it reached ``--max-jobs`` or ``--max-memory``: replaced at once;
- 0: it was stopped by a signal: replaced at once, or under ``--burst`` it found no more
  work: not replaced, and the supervisor exits 0 once every worker has;
- anything else (an exit status or a signal such as SIGKILL or SIGSEGV): it crashed:
  replaced, after a growing pause (`respawn`) if it died soon after starting, so that a
  poison job killing one worker after another does not spin the machine.

Signals are passed to every worker: TERM, INT and QUIT also stop the replacing, and the
supervisor exits once the workers have; HUP also reopens the supervisor's own --log-file.
A stop that comes while a worker is being started (a recycled one's replacement) reaches it
once it is.
With ``--name N`` the workers are named ``N-1`` ... ``N-P`` (stable, so that ``--resume``
finds their jobs after a restart).
"""

from __future__ import annotations

import contextlib
import logging
import signal
import subprocess
import sys
from collections.abc import Sequence

import anyio
from anyio.abc import Process, TaskStatus

from aqless._concurrency.backoff import RESPAWN, Delays
from aqless._worker import logs as _logs
from aqless._worker import process as _process

__all__ = ["Supervisor", "run"]

logger = logging.getLogger(__name__)

_STOPPING = (signal.SIGTERM, signal.SIGINT, signal.SIGQUIT)
#: A worker that lived less than this many seconds crashed on start: wait before the next.
_QUICK_DEATH = 5.0


class Supervisor:
    """Keeps `processes` workers running `arguments` (aqless-run's own arguments)."""

    def __init__(
        self,
        arguments: Sequence[str],
        *,
        processes: int,
        name: str | None,
        burst: bool = False,
        respawn: Delays = RESPAWN,
    ) -> None:
        self.arguments = list(arguments)
        self.respawn = respawn
        self.processes = processes
        self.name = name
        self.burst = burst
        self.children: dict[int, Process] = {}
        self.restarts = 0
        self.stopping = False
        self._stop_signal = signal.SIGTERM  # the one that stopped us, for workers starting late
        self._starting = anyio.Lock()  # the signal mask is the whole process's

    def command(self, index: int) -> list[str]:
        command = [sys.executable, "-m", "aqless.run", *self.arguments, "--child"]
        if self.name:
            command += ["--name", f"{self.name}-{index + 1}"]  # the last --name wins
        return command

    async def run(self) -> int:
        _process.set_title(f"aqless-run supervisor: {self.processes} workers")
        async with anyio.create_task_group() as group:
            await group.start(self._forward_signals)
            async with anyio.create_task_group() as workers:
                for index in range(self.processes):
                    workers.start_soon(self._keep_alive, index)
            group.cancel_scope.cancel()
        logger.info("supervisor: every worker has exited")
        return 0

    async def _keep_alive(self, index: int) -> None:
        quick_deaths = 0
        while not self.stopping:
            started = anyio.current_time()
            process = await self._start(index)
            code = await process.wait()
            del self.children[index]
            if self._stopped():
                break
            if code == 0 and self.burst:
                logger.info("supervisor: worker %d found no more work", index + 1)
                break
            self.restarts += 1
            if code in (0, _process.EXIT_RECYCLE):
                logger.info(
                    "supervisor: worker %d %s; replacing it",
                    index + 1,
                    "recycled" if code else "stopped",
                )
                quick_deaths = 0
                continue
            lived = anyio.current_time() - started
            quick_deaths = quick_deaths + 1 if lived < _QUICK_DEATH else 0
            pause = self.respawn.after(quick_deaths)
            logger.warning(
                "supervisor: worker %d %s; replacing it in %.1f s", index + 1, _ending(code), pause
            )
            await anyio.sleep(pause)

    def _stopped(self) -> bool:
        return self.stopping  # set by a signal while the worker ran

    async def _start(self, index: int) -> Process:
        async with self._starting:
            with _process.control_signals_blocked():
                process = await anyio.open_process(
                    self.command(index),
                    stdin=subprocess.DEVNULL,
                    stdout=None,
                    stderr=None,
                    start_new_session=True,
                )
        self.children[index] = process
        logger.info("supervisor: worker %d started (pid %d)", index + 1, process.pid)
        if self.stopping:  # the stop came while it was starting: it was passed to the others
            process.send_signal(self._stop_signal)
        return process

    async def _forward_signals(
        self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        with anyio.open_signal_receiver(*_process.CONTROL_SIGNALS) as received:
            task_status.started()
            async for number in received:
                self.pass_on(signal.Signals(number))

    def pass_on(self, number: signal.Signals) -> None:
        """Obey signal `number` and pass it to every worker (a stop also to those still
        starting, once they are)."""
        if number in _STOPPING:
            self.stopping = True
            self._stop_signal = number
        elif number == signal.SIGHUP:
            _logs.reopen_files()
        logger.info("supervisor: %s, passed to %d workers", number.name, len(self.children))
        for process in list(self.children.values()):
            if process.returncode is None:
                process.send_signal(number)


def _ending(code: int) -> str:
    """How a crashed worker ended, from its exit status ("was killed by SIGSEGV")."""
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(-code).name}"
    return f"exited with {code}"


def run(arguments: Sequence[str], *, processes: int, name: str | None, burst: bool = False) -> int:
    """Supervise until the workers have stopped; the exit status."""
    supervisor = Supervisor(arguments, processes=processes, name=name, burst=burst)
    return int(anyio.run(supervisor.run))
