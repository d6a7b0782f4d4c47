"""Compression for the codec chain: Zstandard (the ``zstandard`` package)."""

from __future__ import annotations

import threading
from typing import Any

from aqless.errors import CodecError, ConfigurationError, needs_extra

__all__ = ["FASTEST", "LARGEST", "Zstd"]

#: The most bytes a decompression may make: a frame that says more is refused (CodecError),
#: so that a crafted envelope cannot make a reader allocate without bound.
LARGEST = 512 * 1024 * 1024


#: Zstandard's fastest level (its "fast" levels are negative: faster, less compression).
FASTEST = -131072


class Zstd:
    """Zstandard at `level` (1 unless given; negative levels compress faster and less: see
    docs/guides/codecs.md for what each costs) for data of at least `threshold` bytes of
    JSON; smaller data is stored as it is."""

    name = "zstd"

    def __init__(self, *, threshold: int = 1024, level: int = 1) -> None:
        if threshold < 0 or level == 0 or not FASTEST <= level <= 22:
            raise ConfigurationError(
                f"Zstd: threshold from 0, level from 1 to 22 or from -1 to {FASTEST} (faster)"
            )
        with needs_extra("codecs", "aqless.codecs.Zstd"):
            import zstandard
        self.threshold = threshold
        self.level = level
        self._zstandard: Any = zstandard
        # a compressor (its context reused from call to call) is not safe on two threads at
        # once: one per thread (aqless.codecs.threads encodes on two)
        self._local = threading.local()
        self._decompressor: Any = zstandard.ZstdDecompressor()
        self._content_size: Any = zstandard.frame_content_size

    def compress(self, plain: bytes) -> bytes:
        compressor = getattr(self._local, "compressor", None)
        if compressor is None:
            compressor = self._local.compressor = self._zstandard.ZstdCompressor(self.level)
        return bytes(compressor.compress(plain))

    def decompress(self, packed: bytes) -> bytes:
        try:
            size = self._content_size(packed)
            if not 0 <= size <= LARGEST:  # -1: unknown; aqless always writes it
                raise CodecError("", f"a zstd frame of {size} bytes (at most {LARGEST})")
            return bytes(self._decompressor.decompress(packed))
        except CodecError:
            raise
        except Exception as error:  # zstandard.ZstdError: not a frame, or a damaged one
            raise CodecError("", f"not a zstd frame: {error}") from error
