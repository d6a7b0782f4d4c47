"""Payload codecs: job data, results and checkpoints compressed, encrypted, or kept apart.

``Client(codec=PayloadCodec(compression=Zstd(), keys=KeyRing({...}), store=...))`` encodes
what the client writes and decodes what it reads; a worker's handler gets the data decoded.
Data that no step changed stays plain JSON; the rest is an envelope other clients recognise
(docs/protocol/CORE.md, "Payload envelopes"). Compression and encryption need the
``codecs`` extra (``zstandard``, ``cryptography``). A client given no codec reads the key
ring in ``AQLESS_KEYS`` (``id:base64key,...``, the writing key first) and the claim-check
directory in ``AQLESS_BLOB_DIR``, when set: so do the CLI and the dashboard.
"""

from __future__ import annotations

import os
from typing import Any

from aqless.codecs.compression import Zstd
from aqless.codecs.envelope import PLAIN, PayloadCodec, Sealed, decoded_text, decoded_value
from aqless.codecs.keys import KeyRing
from aqless.codecs.stores import BlobStore, DirectoryStore, sweep

__all__ = [
    "PLAIN",
    "BlobStore",
    "DirectoryStore",
    "KeyRing",
    "PayloadCodec",
    "Sealed",
    "Zstd",
    "decoded_text",
    "decoded_value",
    "from_environment",
    "sweep",
    "sweep_blobs",
]


def from_environment(command: str = "Client") -> PayloadCodec | None:
    """The codec ``AQLESS_KEYS`` and ``AQLESS_BLOB_DIR`` describe (None when neither is
    set): it writes as it reads, sealing with the ring's first key."""
    keys, blobs = os.environ.get("AQLESS_KEYS"), os.environ.get("AQLESS_BLOB_DIR")
    if not keys and not blobs:
        return None
    return PayloadCodec(
        keys=KeyRing.parse(keys, command) if keys else None,
        store=DirectoryStore(blobs) if blobs else None,
    )


async def sweep_blobs(client: Any, *, grace: float = 3600.0) -> int:
    """Deletes the blobs of `client`'s claim-check store whose job is gone (completed and
    purged by the server's retention, cancelled...), among those older than `grace`
    seconds; returns how many. Run it now and then (a cron job, a worker's schedule): the
    server deletes jobs by itself, and tells no client."""
    codec: PayloadCodec | None = client.codec
    if codec is None or codec.store is None:
        return 0
    prefix: str = client.prefix

    async def exists(jids: list[str]) -> list[bool]:
        if not jids:
            return []
        argvs = [("EXISTS", f"{prefix}j:{jid}") for jid in jids]
        return [bool(found) for found in await client.protocol.plain_many("blobs.sweep", argvs)]

    return await sweep(codec.store, exists, grace=grace)
