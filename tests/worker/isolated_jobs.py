"""Job code for the isolation tests, at module level so that a child process can import it.

Each function notes its process id in ``<data["dir"]>/<jid>.pid`` first, so that a test can
tell where the code ran and whether that process is gone."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import aqless
from aqless import Job


def _note_pid(job: Job) -> None:
    path = Path(job.data["dir"], f"{job.jid}.pid")
    path.with_suffix(".new").write_text(str(os.getpid()))
    path.with_suffix(".new").rename(path)  # whole: the test may read it the moment it appears


def records(job: Job) -> str:
    """Writes what it received to ``<jid>.json``."""
    _note_pid(job)
    try:
        client = repr(job.client)
    except aqless.ConfigurationError as error:
        client = str(error)
    seen = {"data": job.data, "queue": job.queue_name, "state": job.state, "client": client}
    Path(job.data["dir"], f"{job.jid}.json").write_text(json.dumps(seen))
    return job.jid


def blocks(job: Job) -> None:
    _note_pid(job)
    time.sleep(60)


def ignores_sigterm(job: Job) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _note_pid(job)
    time.sleep(60)


def raises(job: Job) -> None:
    _note_pid(job)
    raise ValueError(f"bad input {job.data['n']}")


def retries(job: Job) -> None:
    _note_pid(job)
    raise aqless.Retry(60, group="try-later", message="not yet")


class NeedsTwoArguments(Exception):
    def __init__(self, first: str, second: str) -> None:
        super().__init__(f"{first} and {second}")


def raises_what_does_not_unpickle(job: Job) -> None:
    _note_pid(job)
    raise NeedsTwoArguments("this", "that")


def dies(job: Job) -> None:
    _note_pid(job)
    os._exit(3)
