"""Facts about this process that the worker shows or watches: its title and its memory."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable

__all__ = ["CONTROL_SIGNALS", "resident_memory", "set_title"]

#: The signals aqless-run obeys (its --help says what each does).
CONTROL_SIGNALS = (
    signal.SIGTERM,
    signal.SIGINT,
    signal.SIGQUIT,
    signal.SIGUSR1,
    signal.SIGUSR2,
    signal.SIGCONT,
)


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
