"""Quiet, stop or resume a running aqless worker: what ``aqless worker`` and the dashboard's
workers pages share (`aqless.Workers.control` underneath). Only a worker that publishes a
record (an aqless worker, alive) reads its control key, so the name must be one of those."""

from __future__ import annotations

from typing import Final

from aqless import rules
from aqless.models import WorkerInfo
from aqless.ops.known import UnknownNameError, closest
from aqless.sharding.client import AnyClient

#: What each request does, as the CLI and the dashboard tell it.
DONE: Final = {
    "quiet": "{name} takes no more jobs; its running ones finish",
    "stop": "{name} stops: its running jobs finish (or go back after its grace), then it exits",
    "resume": "{name} takes jobs again",
}


async def control_worker(client: AnyClient, name: str, command: str) -> str:
    """Ask the live aqless worker `name` to quiet, stop or resume; what was asked, said.

    Raises:
        InvalidValueError: `name` or `command` is outside its rule; nothing is written.
        UnknownNameError: no live aqless worker has that name (another client's worker, or
            one gone, reads no control key); nothing is written.
    """
    rules.check("worker", name, "workers.control")
    rules.check("worker_command", command, "workers.control")
    records = await client.workers.records()
    if name not in records:
        raise UnknownNameError("aqless worker", name, closest(name, records))
    await client.workers.control(name, command)
    return DONE[command].format(name=name)


def mode_of(info: WorkerInfo | None) -> str:
    """A worker's mode as the listings show it: its record's, or ``-`` for a worker of
    another qless client (no record)."""
    return "-" if info is None else info.mode
