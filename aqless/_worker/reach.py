"""Reaching the server as ``aqless-run`` starts: at once, or (``--wait-for-server``) trying
again with a growing pause for a while, saying at each attempt how long it has waited and
how long it has left. A server that cannot be reached in time is a ConnectionLostError whose
message names the server and the reason, not the call that met it."""

from __future__ import annotations

import logging
import re

import anyio

from aqless._concurrency.backoff import START, Delays
from aqless._worker.outage import reason
from aqless.client import Client
from aqless.errors import ConnectionLostError

__all__ = ["reach_server", "shown"]

logger = logging.getLogger(__name__)


def shown(url: str | None) -> str:
    """The server's URL as a log line may show it: without its password."""
    if url is None:
        return "the embedded server"
    return re.sub(r"(//[^/@:]*:)[^/@]*@", r"\1***@", url)


async def reach_server(client: Client, *, wait: float = 0.0, delays: Delays = START) -> None:
    """Return once `client`'s server answers; try again for up to `wait` seconds.

    Raises:
        ConnectionLostError: the server did not answer (in time).
    """
    started = anyio.current_time()
    attempts = 0
    while True:
        attempts += 1
        try:
            await client.config.get("heartbeat")
        except ConnectionLostError as error:
            waited = anyio.current_time() - started
            left = wait - waited
            if left <= 0:
                after = f" (after {attempts} attempts in {waited:.1f} s)" if attempts > 1 else ""
                raise ConnectionLostError(
                    f"cannot connect to the server at {shown(client.url)}: {reason(error)}{after}"
                ) from error
            pause = min(delays.after(attempts), left)
            logger.warning(
                "waiting for the server at %s (%s): %.1f s waited, %.1f s left; again in %.1f s",
                shown(client.url),
                reason(error),
                waited,
                left,
                pause,
            )
            await anyio.sleep(pause)
        else:
            if attempts > 1:
                logger.warning(
                    "the server at %s answers, after %.1f s",
                    shown(client.url),
                    anyio.current_time() - started,
                )
            return
