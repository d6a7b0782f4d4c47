"""The supervisor ``aqless-run --processes P`` becomes: it keeps P worker processes running.

Each worker is ``python -m aqless.run <the same arguments> --child``, in a session of its own
(so a terminal's Ctrl-C reaches only the supervisor, which passes it on once). A worker that
exits is replaced: at once when it exited cleanly (it was recycled after ``--max-jobs`` or
``--max-memory``), after a growing pause when it crashed soon after starting. Signals are
passed to every worker: TERM, INT and QUIT also stop the replacing, and the supervisor exits
once the workers have. With ``--name N`` the workers are named ``N-1`` ... ``N-P`` (stable, so
that ``--resume`` finds their jobs after a restart).
"""

from __future__ import annotations

import logging
import signal
import subprocess
import sys
from collections.abc import Sequence

import anyio
from anyio.abc import Process

from aqless import _process

__all__ = ["Supervisor", "run"]

logger = logging.getLogger("aqless.supervisor")

_STOPPING = (signal.SIGTERM, signal.SIGINT, signal.SIGQUIT)
#: A worker that lived less than this many seconds crashed on start: wait before the next.
_QUICK_DEATH = 5.0


class Supervisor:
    """Keeps `processes` workers running `arguments` (aqless-run's own arguments)."""

    def __init__(self, arguments: Sequence[str], *, processes: int, name: str | None) -> None:
        self.arguments = list(arguments)
        self.processes = processes
        self.name = name
        self.children: dict[int, Process] = {}
        self.restarts = 0
        self.stopping = False

    def command(self, index: int) -> list[str]:
        command = [sys.executable, "-m", "aqless.run", *self.arguments, "--child"]
        if self.name:
            command += ["--name", f"{self.name}-{index + 1}"]  # the last --name wins
        return command

    async def run(self) -> int:
        _process.set_title(f"aqless-run supervisor: {self.processes} workers")
        async with anyio.create_task_group() as group:
            group.start_soon(self._forward_signals)
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
            process = await anyio.open_process(
                self.command(index),
                stdin=subprocess.DEVNULL,
                stdout=None,
                stderr=None,
                start_new_session=True,
            )
            self.children[index] = process
            logger.info("supervisor: worker %d started (pid %d)", index + 1, process.pid)
            code = await process.wait()
            del self.children[index]
            if self._stopped():
                break
            self.restarts += 1
            if code == 0:
                logger.info("supervisor: worker %d recycled", index + 1)
                quick_deaths = 0
                continue
            lived = anyio.current_time() - started
            quick_deaths = quick_deaths + 1 if lived < _QUICK_DEATH else 0
            pause = min(0.5 * 2**quick_deaths, 30.0) if quick_deaths else 0.0
            logger.warning(
                "supervisor: worker %d exited with %d; replacing it in %.1f s",
                index + 1,
                code,
                pause,
            )
            await anyio.sleep(pause)

    def _stopped(self) -> bool:
        return self.stopping  # set by a signal while the worker ran

    async def _forward_signals(self) -> None:
        with anyio.open_signal_receiver(*_process.CONTROL_SIGNALS) as received:
            async for number in received:
                if number in _STOPPING:
                    self.stopping = True
                for process in list(self.children.values()):
                    if process.returncode is None:
                        process.send_signal(number)


def run(arguments: Sequence[str], *, processes: int, name: str | None) -> int:
    """Supervise until the workers have stopped; the exit status."""
    return int(anyio.run(Supervisor(arguments, processes=processes, name=name).run))
