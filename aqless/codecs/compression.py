"""Compression for the codec chain: Zstandard (the ``zstandard`` package)."""

from __future__ import annotations

from typing import Any

from aqless.errors import ConfigurationError, needs_extra

__all__ = ["Zstd"]


class Zstd:
    """Zstandard at `level` (1 unless given) for data of at least `threshold` bytes of
    JSON; smaller data is stored as it is."""

    name = "zstd"

    def __init__(self, *, threshold: int = 1024, level: int = 1) -> None:
        if threshold < 0 or not 1 <= level <= 22:
            raise ConfigurationError("Zstd: threshold from 0, level from 1 to 22")
        with needs_extra("codecs", "aqless.codecs.Zstd"):
            import zstandard
        self.threshold = threshold
        self._compressor: Any = zstandard.ZstdCompressor(level=level)
        self._decompressor: Any = zstandard.ZstdDecompressor()

    def compress(self, plain: bytes) -> bytes:
        return bytes(self._compressor.compress(plain))

    def decompress(self, packed: bytes) -> bytes:
        return bytes(self._decompressor.decompress(packed))
