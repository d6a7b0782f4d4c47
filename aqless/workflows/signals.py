"""Signals to workflows: ``client.signal(jid, signal, payload)``.

A signal is kept with the job (extra fields of its hash: lua/lib/workflow.lua) until a wait of the
workflow takes it; a workflow parked waiting for it is made waiting at once. A second
delivery of the same `signal_id` is taken once.
"""

from __future__ import annotations

import uuid
from typing import Any, Literal, cast

from aqless import rules
from aqless._connection.protocol import ScriptCaller, encode_json
from aqless.codecs import PayloadCodec

__all__ = ["Delivery", "send"]

#: What became of a signal: ``woken`` (the workflow waited for it and was made waiting),
#: ``kept`` (kept for a later wait) or ``duplicate`` (its id was delivered before).
Delivery = Literal["woken", "kept", "duplicate"]


async def send(
    protocol: ScriptCaller,
    jid: str,
    signal: str,
    payload: Any = None,
    signal_id: str | None = None,
    codec: PayloadCodec | None = None,
) -> Delivery:
    """Send `signal` with `payload` (JSON) to the workflow `jid` through `protocol` (the
    job's server), the payload stored through `codec` as the job's data is (its chain for
    no queue in particular: the sender does not read the job); see `Delivery`.
    InvalidValueError or PayloadError (nothing sent) for a bad input, JobNotFoundError,
    SignalRefusedError for a job that has ended."""
    command = "job.signal"
    rules.check("jid", jid, command)
    rules.check("signal", signal, command)
    signal_id = rules.check_optional("signal_id", signal_id, command) or uuid.uuid4().hex
    text: str | bytes = encode_json(payload, "signal payload")
    if codec is not None:
        text = codec.encode_text(text, jid)
    reply = await protocol.text(command, jid, signal, text, signal_id)
    return cast(Delivery, reply)
