"""Authenticated encryption (AES-256-GCM, from the ``cryptography`` package) under a key
ring: the first key seals, every key listed opens, so keys rotate without making the data
already stored unreadable."""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from aqless import rules
from aqless.errors import (
    ConfigurationError,
    DecryptionError,
    InvalidValueError,
    KeyMissingError,
    needs_extra,
)

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

__all__ = ["KeyRing"]

NONCE_BYTES = 12  # GCM's own size: a random one per seal


def _cipher(key: bytes) -> AESGCM:
    with needs_extra("codecs", "aqless.codecs.KeyRing"):
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    return AESGCM(key)


class KeyRing:
    """Keys by id, in order: the first seals what is written, each opens what it sealed.

    Rotate by putting the new key first and keeping the old ones after it until no stored
    job, result or checkpoint was sealed by them. Keys are 32 bytes (AES-256).

        KeyRing({"k3": new_key, "k2": old_key})
    """

    def __init__(self, keys: Mapping[str, bytes]) -> None:
        if not keys:
            raise ConfigurationError("a key ring needs at least one key")
        for key_id, key in keys.items():
            rules.check("codec.key_id", key_id, "KeyRing")
            if len(key) != 32:
                raise ConfigurationError(f"key {key_id!r} must be 32 bytes (AES-256)")
        self._ciphers = {key_id: _cipher(key) for key_id, key in keys.items()}
        self.writing: str = next(iter(keys))
        self.ids: tuple[str, ...] = tuple(keys)

    @classmethod
    def parse(cls, text: str, command: str = "AQLESS_KEYS") -> KeyRing:
        """The ring written as ``id:base64key,id:base64key`` (the first writes): the value
        of ``AQLESS_KEYS``, which the CLI, the dashboard and every client read when given
        no codec. InvalidValueError naming `command` for text outside that rule."""
        pairs: dict[str, bytes] = {}
        for entry in rules.parse("codec.keys", text, command):
            key_id, _, encoded = entry.partition(":")
            try:
                pairs[rules.check("codec.key_id", key_id, command)] = base64.b64decode(
                    encoded, validate=True
                )
            except (ValueError, binascii.Error) as error:
                expected = rules.RULES["codec.keys"].expected()
                raise InvalidValueError(command, "keys", f"{key_id}:...", expected) from error
        return cls(pairs)

    @staticmethod
    def new_key() -> bytes:
        """A fresh random 32-byte key."""
        return os.urandom(32)

    @staticmethod
    def encoded(key: bytes) -> str:
        """A key as ``AQLESS_KEYS`` writes it (base64)."""
        return base64.b64encode(key).decode()

    def seal(self, plain: bytes, header: bytes) -> bytes:
        """`plain` sealed by the writing key: nonce, then ciphertext and tag; `header` (the
        envelope's description) is authenticated with it."""
        nonce = os.urandom(NONCE_BYTES)
        return nonce + self._ciphers[self.writing].encrypt(nonce, plain, header)

    def open(self, key_id: str, sealed: bytes, header: bytes) -> bytes:
        """What `seal` sealed under `key_id`; KeyMissingError when the ring has no such
        key, DecryptionError when that key does not open it."""
        cipher = self._ciphers.get(key_id)
        if cipher is None:
            raise KeyMissingError(
                key_id, f"encrypted with key {key_id!r}, which the key ring {self.ids} lacks"
            )
        from cryptography.exceptions import InvalidTag

        try:
            return cipher.decrypt(sealed[:NONCE_BYTES], sealed[NONCE_BYTES:], header)
        except InvalidTag as error:
            raise DecryptionError(
                key_id, f"key {key_id!r} does not open this data (a wrong key, or altered bytes)"
            ) from error
