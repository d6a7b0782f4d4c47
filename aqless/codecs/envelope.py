"""The codec chain and its envelope: what a job's data, result and checkpoint become.

Encoding: the value's JSON text, compressed when it is at least the compression's threshold,
sealed by the key ring's writing key; then kept inline (base64) or, when at least the
claim check's threshold, put in the store with the envelope naming it. Data that no step
changed is stored as plain JSON, as always. The envelope is a JSON object whose first key
is ``aqless:codec`` (docs/protocol/CORE.md, "Payload envelopes"):

    {"aqless:codec":1,"codecs":["zstd","aes-gcm"],"key":"k2","data":"<base64>"}
    {"aqless:codec":1,"codecs":["aes-gcm"],"key":"k2","blob":"<jid>.<random>","size":1048576}

The key ring authenticates the envelope's description (`header`) with the bytes, so a
changed ``codecs`` or ``key`` fails to open as changed bytes do.
"""

from __future__ import annotations

import base64
import binascii
import importlib
import json
import secrets
from collections.abc import Callable, Mapping
from functools import lru_cache, partial
from typing import TYPE_CHECKING, Any

from aqless._connection.data_text import decode_data, encode_data
from aqless.errors import (
    BlobMissingError,
    BlobStoreError,
    CodecError,
    ConfigurationError,
    KeyMissingError,
    PayloadError,
)

if TYPE_CHECKING:
    from aqless.codecs.compression import Zstd
    from aqless.codecs.keys import KeyRing
    from aqless.codecs.stores import BlobStore

__all__ = ["ENVELOPE_PREFIX", "MARK", "PayloadCodec", "Sealed", "decoded_value"]

MARK = "aqless:codec"
VERSION = 1
ENVELOPE_PREFIX = '{"aqless:codec":'
_ENCRYPTED = "aes-gcm"


def _base64() -> tuple[Callable[[bytes], bytes], Callable[[str], bytes]]:
    """Base64 encode and decode (validating: binascii.Error for anything else): pybase64's
    (SIMD: ~1 us for 26 KB where binascii takes ~20 us, and decodes as fast) when
    installed, the standard library's otherwise; the same bytes either way."""
    try:
        fast = importlib.import_module("pybase64")
    except ImportError:
        return partial(binascii.b2a_base64, newline=False), partial(base64.b64decode, validate=True)
    return fast.b64encode, partial(fast.b64decode, validate=True)


_b64encode, _b64decode = _base64()


@lru_cache(maxsize=64)
def _head(codecs: tuple[str, ...], key: str) -> bytes:
    """An envelope's JSON up to its payload's field: ``{"aqless:codec":1,...,"key":"k2"``."""
    head = {MARK: VERSION, "codecs": list(codecs), "key": key}
    return json.dumps(head, separators=(",", ":"))[:-1].encode()


def header(codecs: list[str], key: str) -> bytes:
    """What the seal authenticates beside the bytes."""
    return f"{MARK}/{VERSION}|{','.join(codecs)}|{key}".encode()


class Sealed(str):
    """Stored data this client cannot open, in place of the value: the text says what it is
    (``encrypted (key k2)``), which the CLI and the dashboard show; `error` is the typed
    error (CodecError) the worker raises instead of running the job. A complete leaves the
    stored data as it is."""

    __slots__ = ("error",)
    error: CodecError
    sealed = True  # what aqless._connection.job_data tells it by

    def __new__(cls, error: CodecError) -> Sealed:
        if error.key:
            text = f"encrypted (key {error.key})"
        elif isinstance(error, BlobMissingError):
            text = "stored apart (not in a store given)"
        else:
            text = "encoded (cannot open)"
        sealed = super().__new__(cls, text)
        sealed.error = error
        return sealed


class PayloadCodec:
    """A client's codec chain (``Client(codec=PayloadCodec(...))``), for job data, results
    and checkpoints. Each part is optional:

    Args:
        compression: `aqless.codecs.Zstd` (from a threshold in bytes).
        keys: a `KeyRing`: the first key seals, every key opens.
        store: a claim-check store (`DirectoryStore`) for payloads of at least
            `store_threshold` bytes once compressed and sealed.
        store_threshold: bytes; 256 KiB unless given.
        queues: a chain of its own for some queues (by name): what is written for a job of
            such a queue goes through it; reading tries this chain, then theirs.

    Decoding needs none of them to read plain JSON; an envelope needs what wrote it (the
    key of its id, the store), else the data reads as `Sealed`.
    """

    def __init__(
        self,
        *,
        compression: Zstd | None = None,
        keys: KeyRing | None = None,
        store: BlobStore | None = None,
        store_threshold: int = 256 * 1024,
        queues: Mapping[str, PayloadCodec] | None = None,
    ) -> None:
        if store_threshold < 0:
            raise ConfigurationError("store_threshold is a number of bytes from 0")
        self.compression = compression
        self.keys = keys
        self.store = store
        self.store_threshold = store_threshold
        self.queues: dict[str, PayloadCodec] = dict(queues or {})
        self._decompressor = compression

    def __repr__(self) -> str:
        parts = [
            f"compression>={self.compression.threshold}" if self.compression else "",
            f"keys={list(self.keys.ids)}" if self.keys else "",
            f"store>={self.store_threshold}" if self.store else "",
        ]
        return f"<PayloadCodec {' '.join(part for part in parts if part)}>"

    # -- writing ------------------------------------------------------------------------------

    def encode(self, value: object, what: str, jid: str) -> str | bytes:
        """The stored text of `value` (job data, a result, a checkpoint's state) of job
        `jid`; PayloadError (BlobStoreError from the store) before anything is sent."""
        return self.encode_text(encode_data(value, what), jid)

    def encode_text(self, text: str | bytes, jid: str) -> str | bytes:
        """`encode` of JSON text already written."""
        encoded = self.encode_to_send(text, jid)
        if encoded is text or isinstance(encoded, str):
            return encoded  # plain JSON as given, or a claim check's envelope
        return encoded.decode("ascii")  # an envelope: text, as it always was

    def encode_to_send(self, text: str | bytes, jid: str) -> str | bytes:
        """`encode_text`, an envelope left as the bytes that are sent (a put sends them:
        decoding ~35 KB of base64 to text only for it to be encoded again costs ~10 µs)."""
        plain = text.encode() if isinstance(text, str) else text
        codecs: list[str] = []
        payload = plain
        compression = self.compression
        if compression is not None and len(plain) >= compression.threshold:
            payload = compression.compress(plain)
            codecs.append(compression.name)
        key = ""
        if self.keys is not None:
            key = self.keys.writing
            codecs.append(_ENCRYPTED)
            payload = self.keys.seal(payload, header(codecs, key))
        store = self.store
        if store is not None and len(payload) >= self.store_threshold:
            name = f"{jid}.{secrets.token_hex(8)}"
            try:
                store.put(name, payload)
            except OSError as error:
                raise BlobStoreError(f"the store did not keep {name}: {error}") from error
            blob = f',"blob":{json.dumps(name)},"size":{len(payload)}}}'
            return _head(tuple(codecs), key).decode() + blob  # short: text
        elif not codecs:
            return text  # nothing changed it: plain JSON, as every client reads
        # base64's letters need no escape in JSON: the text is joined, not encoded (json.dumps
        # reads every character of a string it writes, ~100 us for 35 KB)
        data = _b64encode(payload)
        return b"".join((_head(tuple(codecs), key), b',"data":"', data, b'"}'))

    # -- reading ------------------------------------------------------------------------------

    def decode(self, text: str) -> Any:
        """The value stored as `text`: plain JSON as it is, an envelope opened; CodecError
        for an envelope this codec cannot open, PayloadError for text that is not JSON."""
        value = _json(text)
        return self.open(value) if is_envelope(value) else value

    def for_queue(self, queue: str) -> PayloadCodec:
        """The chain that writes for jobs of `queue`."""
        return self.queues.get(queue, self)

    def open(self, envelope: dict[str, Any]) -> Any:
        """The value an envelope (decoded from JSON) holds: opened by this chain, else by
        one of its queues' chains (the first error when none can)."""
        try:
            return self._open(envelope)
        except (KeyMissingError, BlobMissingError) as error:
            for other in self.queues.values():
                try:
                    return other.open(envelope)
                except (KeyMissingError, BlobMissingError):
                    continue
            raise error

    def _open(self, envelope: dict[str, Any]) -> Any:
        codecs = envelope.get("codecs")
        key = envelope.get("key", "")
        if not isinstance(codecs, list) or not isinstance(key, str):
            raise CodecError(key if isinstance(key, str) else "", "a malformed envelope")
        payload = self._payload(envelope, key)
        for codec in reversed(codecs):
            if codec == _ENCRYPTED:
                if self.keys is None:
                    raise KeyMissingError(key, f"encrypted with key {key!r}; no key ring given")
                payload = self.keys.open(key, payload, header(codecs, key))
            elif codec == "zstd":
                payload = self._zstd().decompress(payload)
            else:
                raise CodecError(key, f"an envelope of codec {codec!r}, unknown to aqless")
        return _json(payload)

    def _payload(self, envelope: dict[str, Any], key: str) -> bytes:
        blob = envelope.get("blob")
        if isinstance(blob, str):
            if self.store is None:
                raise BlobMissingError(key, f"its payload is in a store ({blob}); none given")
            payload = self.store.get(blob)
            if key and not payload:
                raise BlobMissingError(key, f"blob {blob} is empty")
            return payload
        try:
            return _b64decode(str(envelope.get("data", "")))
        except binascii.Error as error:
            raise CodecError(key, "an envelope whose data is not base64") from error

    def _zstd(self) -> Zstd:
        if self._decompressor is None:
            from aqless.codecs.compression import Zstd

            try:
                self._decompressor = Zstd()
            except ConfigurationError as error:  # no zstandard here: this data stays closed
                raise CodecError("", str(error)) from error
        return self._decompressor

    def blobs_of(self, text: object) -> list[str]:
        """The claim-check blob a stored text names (none for plain data)."""
        if isinstance(text, str) and text.startswith(ENVELOPE_PREFIX):
            blob = _json(text).get("blob")
            return [blob] if isinstance(blob, str) else []
        return []


def is_envelope(value: object) -> bool:
    return type(value) is dict and MARK in value


def _json(text: str | bytes) -> Any:
    try:
        return decode_data(text)
    except (ValueError, RecursionError) as error:
        shown = text[:80] if isinstance(text, str) else text[:80].decode("utf-8", "replace")
        raise PayloadError(f"stored job data is not JSON: {shown!r}") from error


def decoded_value(codec: PayloadCodec | None, value: Any) -> Any:
    """`value` read from JSON (a checkpoint inside a job's reply): an envelope opened by
    `codec` (Sealed when it cannot), anything else as it is."""
    if not is_envelope(value):
        return value
    try:
        return (codec or PLAIN).open(value)
    except CodecError as error:
        return Sealed(error)


def decoded_text(codec: PayloadCodec | None, text: str) -> Any:
    """Stored JSON text (a job's data, a result) decoded: an envelope opened by `codec`,
    `Sealed` when it cannot be; PayloadError for text that is not JSON."""
    if not text.startswith(ENVELOPE_PREFIX):
        return _json(text)
    try:
        return (codec or PLAIN).decode(text)
    except CodecError as error:
        return Sealed(error)


def opened_json(codec: PayloadCodec | None, text: str) -> str:
    """Stored JSON text (a result) as plain JSON text: an envelope opened by `codec`, or
    `Sealed` (a str that is no JSON) when it cannot be; other text as it is."""
    if not text.startswith(ENVELOPE_PREFIX):
        return text
    opened = decoded_text(codec, text)
    return opened if isinstance(opened, Sealed) else json.dumps(opened)


PLAIN = PayloadCodec()
"""The codec of a client given none: plain JSON only, an envelope read as `Sealed`."""
