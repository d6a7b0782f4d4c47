"""A big put's data written beside the script call instead of through it.

A put's data passed as an argument of the script is copied into Lua (a string made, and the
garbage collection that allocation drives), checked as JSON there, and copied out again by
the job's HSET: for a 100 KB payload, ~350k of the ~840k instructions the server spends on
the put (benchmarks/HISTORY.md). So a put whose data has at least `STAGED_BYTES` bytes goes as one
transaction, on one connection::

    MULTI
    HSET <prefix>j:<jid>-staged data <the data>
    FCALL <library> ... queue.put <now> <worker> <queue> <jid> <klass> "" <delay> ... staged <jid>
    DEL <prefix>j:<jid>-staged
    EXEC

and the script (Job.put, lua/lib/put.lua) takes the staged hash as the new job's hash
(RENAME), or reads the text from it for a job put again. A put the script refuses, or that
writes nothing (deduplicated, or ``replace=False`` finding its job), leaves the staged key
to the DEL behind it; MULTI makes the four one step, so a connection lost on the way leaves
nothing half done. The staged data is aqless's own encoding of the job's data (JSON, or a
codec's envelope): the script does not check it again.

The staged key is in the job's own key space (its prefix: on a Cluster the prefix's hash tag
keeps it in the deployment's slot; on a sharded deployment the transaction goes to the
job's shard). Puts of the commands in `PUT_START` are staged (``job.requeue``, flows and
batches carry their data as before), and only over the client's own (lean) connection.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, TypeAlias

#: an argument on the wire (aqless.scripts.loader's `Argument`, which imports this module)
Argument: TypeAlias = str | bytes | int | float

__all__ = ["PUT_START", "STAGED_BYTES", "Staged", "staged"]

#: The size from which a put's data is staged: the smallest at which staging spares the
#: server work for every kind of JSON text. The transaction costs ~25k instructions more than
#: a call; the data's trip through Lua costs as much at ~10 KB of text with escapes (JSON in
#: a string, checked by cjson) and more than that only past ~12 KB of plain text (8 KB: 289k
#: instructions a put as a call, 296k staged; 16 KB: 338k and 317k; `python -m
#: benchmarks.lua_instructions --payloads ...`, benchmarks/HISTORY.md).
STAGED_BYTES = 16 * 1024

#: For each put command (those staged, and those aqless.puts.prepare_put makes): where put's
#: own arguments (worker, queue, jid, klass, data, delay, options...) begin among its
#: arguments after `now` (a deduplicated put's three come first).
PUT_START = {"queue.put": 0, "queue.putNew": 0, "queue.putDeduplicated": 3}


class Staged(NamedTuple):
    """A put whose data goes beside its call: the staged key, the data, and the call's
    arguments (its `now` first) with the data left out and the ``staged`` option added."""

    key: str
    data: str | bytes
    arguments: tuple[Argument, ...]


def staged(command: str, args: Sequence[Argument], prefix: str) -> Staged | None:
    """The staged form of a call (`args` begin with its `now`) of a put whose data is at
    least `STAGED_BYTES` long; None for any other call."""
    start = PUT_START.get(command)
    if start is None or len(args) < start + 7:
        return None
    data = args[start + 5]
    if not isinstance(data, str | bytes) or len(data) < STAGED_BYTES:
        return None
    jid = args[start + 3]
    name = jid.decode() if isinstance(jid, bytes) else str(jid)
    arguments = (*args[: start + 5], "", *args[start + 6 :], "staged", name)
    return Staged(f"{prefix}j:{name}-staged", data, arguments)
