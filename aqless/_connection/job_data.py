"""A job's data as it was read, so that ``Job.complete`` can leave the stored data alone.

complete's `data` argument replaces the job's stored data, so a complete used to send the
data back whether or not the job's code changed it: for a payload of 100 KB, ~200 µs of
client CPU to encode it and ~150 µs of server CPU to decode and write it again (Valkey 9;
twice that on Redis 7). Most job code never changes its data. When ``StoredData`` can tell
that `job.data` is as it was read, the complete sends aqless's ``keep_data`` option instead
(see lifecycle.lua's Job.complete), and the server neither decodes nor writes the data.

It tells exactly, and mostly without encoding: data that is a JSON scalar, or a dict or list
of at most 64 members that are all JSON scalars (immutable), encodes as it did while it is
the same object holding the same member objects in the same order. Other data (nested, or
larger) is encoded, as every complete did before, and kept when its text is the stored one.
A change made in place is caught either way.
"""

from __future__ import annotations

from itertools import chain
from typing import Any, Protocol

from aqless._connection.protocol import encode_json
from aqless.errors import PayloadError


class PayloadCodec(Protocol):
    """What StoredData needs of an aqless.codecs.PayloadCodec."""

    def encode_text(self, text: str | bytes, jid: str) -> str | bytes: ...

    def decode(self, text: str) -> Any: ...


__all__ = ["KEEP_DATA", "StoredData"]

#: job.complete's (and job.completeAndRequeue's) option: the job keeps its stored data.
KEEP_DATA = ("keep_data", "1")

_SCALARS = frozenset({str, int, float, bool, type(None)})
_MOST_MEMBERS = 64  # past this, telling by identity could cost more than it spares


def _members(data: Any) -> tuple[Any, ...] | None:
    """The objects whose identity tells that `data` encodes as it did: a flat dict's keys
    and values in order, a flat list's items, none for a scalar; None when only encoding
    can tell."""
    kind = type(data)
    if kind in _SCALARS:
        return ()
    if kind is dict:
        if len(data) > _MOST_MEMBERS // 2:
            return None
        members = tuple(chain.from_iterable(data.items()))
    elif kind is list:
        if len(data) > _MOST_MEMBERS:
            return None
        members = tuple(data)
    else:
        return None
    return members if all(type(member) in _SCALARS for member in members) else None


class StoredData:
    """The stored text of a job's data (None when unknown) and the object decoded from it."""

    __slots__ = ("_codec", "_members", "_object", "_text")

    def __init__(self, text: str | None, data: Any, codec: PayloadCodec | None = None) -> None:
        self._text = text
        self._object = data
        self._codec = codec
        self._members = None if text is None else _members(data)

    def __reduce__(self) -> tuple[type[StoredData], tuple[None, None]]:
        # a pickled copy (isolated job code's, aqless._worker.children) carries no second
        # copy of the payload (nor the codec and its keys): it knows no stored text; the
        # worker completes the job through its own handle
        return StoredData, (None, None)

    def complete_argument(self, data: Any, jid: str = "") -> tuple[str, tuple[str, ...]]:
        """complete's `data` argument for the job's `data` now, and the options that go
        with it: ``KEEP_DATA`` (and an empty argument) when `data` is as it was read (data
        this client could not open, aqless.codecs.Sealed, always is)."""
        if self._text is None:
            return self._encoded(data, jid), ()
        if self._same_members(data) or (data is self._object and getattr(data, "sealed", False)):
            return "", KEEP_DATA
        text = encode_json(data, "job data")
        if text == self._text:
            return "", KEEP_DATA
        if self._codec is None:
            return text, ()
        try:
            if self._codec.decode(self._text) == data:  # an envelope's text differs each time
                return "", KEEP_DATA
        except PayloadError:  # the stored text does not open here: written anew
            pass
        return self._encoded_text(text, jid), ()

    def _encoded(self, data: Any, jid: str) -> str:
        text = encode_json(data, "job data")
        return text if self._codec is None else self._encoded_text(text, jid)

    def _encoded_text(self, text: str, jid: str) -> str:
        codec = self._codec
        encoded = text if codec is None else codec.encode_text(text, jid)
        return encoded.decode() if isinstance(encoded, bytes) else encoded

    def _same_members(self, data: Any) -> bool:
        if data is not self._object or self._members is None:
            return False
        members = _members(data)
        return (
            members is not None
            and len(members) == len(self._members)
            and all(now is then for now, then in zip(members, self._members, strict=True))
        )
