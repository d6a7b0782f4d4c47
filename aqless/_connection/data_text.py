"""A put's job data as JSON, encoded by msgspec where that gives the stdlib encoder's bytes.

The stored text of a job's data is what every qless client reads, and aqless has always
written it with ``json`` (compact separators, ``ensure_ascii``: see
aqless._connection.protocol.encode_json). That encoder is slow on large data: ~220 µs for a
100 KB string on a slow machine, where msgspec (optional: used when installed)
takes ~26 µs and hands over bytes, ready to send.

The two write different text for some values: msgspec writes non-ASCII characters and
DEL (``\\x7f``) as they are where ``json`` escapes them, writes floats below 1e-4 or from
1e16 up in another notation, and encodes types ``json`` refuses (dates, sets, NaN as
null...). So msgspec encodes only data that is made of JSON's own types (dict with ASCII
string keys, list, tuple, ASCII string without DEL, int, bool, None, and a float 0 or of a
magnitude from 1e-4 to 1e16), of at most `_MOST_VALUES` values, which a walk over the data
checks; anything else goes to ``json`` as before, refusals included.

Decoding (``decode_data``, a job's data as a worker reads it) is msgspec's too where it is
installed: ~50 µs for 100 KB of JSON text where ``json.loads`` takes ~90. msgspec reads
what ``json`` reads as the same values (integers of any length, floats correctly rounded,
the last of duplicate keys); it refuses some texts that ``json`` reads (NaN and Infinity,
numbers past a float's range, escaped lone surrogates), and those go to ``json``, so a text
decodes to what it always did, and a text ``json`` refuses is refused as before.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from aqless._connection.protocol import encode_json

__all__ = ["decode_data", "encode_data"]

#: past this many values, the walk costs about what it spares
_MOST_VALUES = 256

# the magnitudes whose floats msgspec and repr() write alike (repr's plain notation)
_SMALLEST_PLAIN = 1e-4
_LARGEST_PLAIN = 1e16


def _msgspec_encode() -> Callable[[Any], bytes] | None:
    try:
        from msgspec.json import Encoder
    except ImportError:  # pragma: no cover - msgspec is optional
        return None
    return Encoder().encode


_encode_fast = _msgspec_encode()


def _msgspec_decode() -> tuple[Callable[[str | bytes], Any], type[Exception]] | None:
    try:
        from msgspec import DecodeError
        from msgspec.json import Decoder
    except ImportError:  # pragma: no cover - msgspec is optional
        return None
    return Decoder().decode, DecodeError


_decode_fast = _msgspec_decode()


def decode_data(text: str | bytes) -> Any:
    """The value of JSON `text`, as ``json.loads`` reads it (its ValueError or
    RecursionError for text that is not JSON)."""
    if _decode_fast is not None:
        decode, refused = _decode_fast
        try:
            return decode(text)
        except (refused, UnicodeError):  # json may still read it (see above)
            pass
    return json.loads(text)


def encode_data(value: object, what: str) -> str | bytes:
    """JSON text of `value` (as ``encode_json`` writes it), or PayloadError before anything
    is sent; bytes when msgspec encoded it."""
    if _encode_fast is not None and written_alike(value):
        return _encode_fast(value)
    return encode_json(value, what)


def _plain_text(text: str) -> bool:
    return text.isascii() and "\x7f" not in text  # isascii() is O(1) for a str


def written_alike(value: object) -> bool:
    """Whether msgspec writes `value` exactly as the stdlib encoder does (see above)."""
    stack: list[Any] = [value]
    left = _MOST_VALUES
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str:
            if not _plain_text(item):
                return False
        elif kind is dict:
            left -= len(item)
            if left < 0:
                return False
            for key in item:
                if type(key) is not str or not _plain_text(key):
                    return False
            stack.extend(item.values())
        elif kind is list or kind is tuple:
            left -= len(item)
            if left < 0:
                return False
            stack.extend(item)
        elif kind is float:
            magnitude = abs(item)
            # NaN and the infinities fail both tests: json refuses them
            if not (_SMALLEST_PLAIN <= magnitude < _LARGEST_PLAIN or magnitude == 0):
                return False
        elif not (kind is int or kind is bool or item is None):
            return False
    return True
