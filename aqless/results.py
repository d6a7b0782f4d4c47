"""Job results: a handler's return value, kept with the job, and awaiting it.

The complete that finishes a job sends the value as JSON (its option ``result``), and the
script keeps it in the job hash as the field ``result``, so it lives and expires with the job
(``jobs-history``). A value that JSON cannot encode, or one over the server's
``result-max-bytes`` configuration (1 MiB unless set), does not stop the completion: the job
completes without it, and the field ``result_dropped`` says why.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import TYPE_CHECKING, Any

import anyio

from aqless._connection.protocol import encode_json
from aqless.codecs import PayloadCodec, Sealed
from aqless.codecs.envelope import ENVELOPE_PREFIX, opened_json
from aqless.errors import (
    JobGoneError,
    PayloadError,
    ResultTimeoutError,
)
from aqless.models import JobResult

if TYPE_CHECKING:
    from aqless.contracts import ScriptClient as Client

__all__ = ["await_result", "read_result", "result_options"]

logger = logging.getLogger(__name__)


def result_options(jid: str, value: Any, codec: PayloadCodec | None = None) -> list[str]:
    """complete's options for a return value: none for None, ``result <JSON>``, or
    ``result_dropped <why>`` for a value JSON cannot encode (logged as a warning: the job
    still completes)."""
    if value is None:
        return []
    try:
        text = encode_json(value, "the job's result")
        if codec is not None:
            encoded = codec.encode_text(text, jid)
            text = encoded.decode() if isinstance(encoded, bytes) else encoded
        return ["result", text]
    except PayloadError as error:
        logger.warning("job %s completes without its result: %s", jid, error)
        return ["result_dropped", str(error)]


async def read_result(client: Client, jid: str) -> JobResult | None:
    """The job's outcome as the server holds it now; None when the job does not exist."""
    reply = await client.protocol.json("job.result", jid)
    if reply is None:
        return None
    stored = JobResult.from_json(jid, reply)
    if stored.text is not None and stored.text.startswith(ENVELOPE_PREFIX):
        # the value's JSON opened here, so that `value` and `outcome` read it as any other
        opened = opened_json(client.codec, stored.text)
        if isinstance(opened, Sealed):
            raise opened.error
        stored = dataclasses.replace(stored, text=opened)
    return stored


async def await_result(client: Client, jid: str, timeout: float | None) -> Any:
    """Waits (on events, as ``client.wait``) until the job is complete or failed, then
    returns its kept return value or raises (see ``Client.result``)."""
    try:
        with anyio.fail_after(timeout):
            while True:
                await client.wait(jid)
                stored = await read_result(client, jid)
                if stored is None:
                    raise JobGoneError(jid, "cancelled, expired or never put")
                if stored.finished:  # else it was put again after it finished: wait again
                    return stored.outcome()
    except TimeoutError as error:
        if isinstance(error, ResultTimeoutError):
            raise
        raise ResultTimeoutError(jid, f"not finished within {timeout} s") from error
