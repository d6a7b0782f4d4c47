"""Facts about this process that the worker shows or watches: its title and its memory; the
signals it obeys and the exit status that asks its supervisor to replace it."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Iterator

__all__ = [
    "CONTROL_SIGNALS",
    "EXIT_RECYCLE",
    "control_signals_blocked",
    "obey_control_signals",
    "resident_memory",
    "set_title",
]

#: The signals aqless-run obeys (its --help says what each does).
CONTROL_SIGNALS = (
    signal.SIGTERM,
    signal.SIGINT,
    signal.SIGQUIT,
    signal.SIGUSR1,
    signal.SIGUSR2,
    signal.SIGCONT,
    signal.SIGHUP,
)

#: The exit status of a worker that reached --max-jobs or --max-memory: its supervisor
#: replaces it at once (EX_TEMPFAIL: "try again"). 0 means it was done: stopped by a
#: signal, or under --burst its queues had no more work.
EXIT_RECYCLE = 75


@contextlib.contextmanager
def control_signals_blocked() -> Iterator[None]:
    """Hold the control signals back meanwhile; a process started here begins with them
    blocked, so that one sent before it obeys them (``obey_control_signals``) waits instead
    of killing it. Those sent to this process meanwhile arrive when the block ends."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, CONTROL_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def obey_control_signals() -> None:
    """Let the control signals in (a supervisor started this process with them blocked):
    call once their handlers are installed."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, CONTROL_SIGNALS)


def _title_setter() -> Callable[[str], None]:
    try:
        from setproctitle import setproctitle
    except ImportError:  # the `fast` extra is not installed: titles are a nicety
        return lambda title: None
    return setproctitle


set_title = _title_setter()


def resident_memory() -> int | None:
    """This process's resident set size in bytes, where the system tells (Linux)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            pages = int(statm.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE")
