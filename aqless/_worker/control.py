"""What an operator asks of a running worker from the dashboard or ``aqless worker``: quiet
(take no more jobs), stop, or resume (`aqless.Workers.control`).

The request is a string in the worker's control key ``<prefix>aqless:control:<name>``
(aqless's own key, as the worker's record is), which the worker takes (``GETDEL``) every
`CHECK_EVERY` seconds and at once when an ``aqless:control`` event arrives on its channel
(`read_soon`, called by the LockKeeper, which listens there). A read that fails is tried at
the next look; a request nobody reads expires (`aqless.client.CONTROL_TTL`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Final

import anyio

from aqless._concurrency.wakeup import Wakeup
from aqless.client import Client, worker_control_key
from aqless.errors import AqlessError

CHECK_EVERY: Final = 1.0  # seconds between two reads of the control key
COMMANDS: Final = ("quiet", "stop", "resume")

logger = logging.getLogger("aqless.worker")


class ControlReader:
    """Reads a worker's control key and hands each request to `obey`."""

    def __init__(self, client: Client, name: str, obey: Callable[[str], None]) -> None:
        self._client = client
        self._key = worker_control_key(client.prefix, name)
        self._name = name
        self._obey = obey
        self._wake = Wakeup()

    def read_soon(self) -> None:
        """An event said a request is waiting: read it now."""
        self._wake.fire()

    async def read(self) -> str | None:
        """The request waiting, taken from the key (None: none, or none known)."""
        value = await self._client.protocol.plain("worker.control", "GETDEL", self._key)
        if value is None:
            return None
        command = value.decode() if isinstance(value, bytes) else str(value)
        if command not in COMMANDS:
            logger.warning("worker %s: ignoring the control request %r", self._name, command)
            return None
        return command

    async def run(self) -> None:
        while True:
            wake = self._wake.event
            try:
                command = await self.read()
            except AqlessError as error:  # the next look tries again
                logger.debug("worker %s: reading its control key failed: %s", self._name, error)
            else:
                if command is not None:
                    logger.warning("worker %s: asked to %s", self._name, command)
                    self._obey(command)
            with anyio.move_on_after(CHECK_EVERY):
                await wake.wait()
