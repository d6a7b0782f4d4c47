"""The codec chain's encoding, fast paths against the plain ones: the envelope joined as
bytes is the JSON the stdlib encoder writes of it, and every level of Zstandard's writes
what every reader opens."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from aqless.codecs import DirectoryStore, KeyRing, PayloadCodec, Zstd

TEXT = json.dumps({"rows": [{"id": n, "email": f"user{n}@example.com"} for n in range(300)]})


def as_bytes(encoded: str | bytes) -> bytes:
    return encoded.encode() if isinstance(encoded, str) else encoded


def chains(tmp_path: Path) -> dict[str, PayloadCodec]:
    ring = KeyRing({"k-2": KeyRing.new_key()})
    return {
        "zstd": PayloadCodec(compression=Zstd()),
        "keys": PayloadCodec(keys=ring),
        "zstd+keys": PayloadCodec(compression=Zstd(), keys=ring),
        "store": PayloadCodec(
            compression=Zstd(), store=DirectoryStore(tmp_path), store_threshold=0
        ),
    }


@pytest.mark.parametrize("name", ["zstd", "keys", "zstd+keys", "store"])
def test_the_joined_envelope_is_the_json_the_stdlib_writes_of_it(tmp_path: Path, name: str) -> None:
    codec = chains(tmp_path)[name]
    encoded = as_bytes(codec.encode_text(TEXT, "jid-1"))
    envelope = json.loads(encoded)
    assert encoded == json.dumps(envelope, separators=(",", ":")).encode()
    assert list(envelope)[:3] == ["aqless:codec", "codecs", "key"]
    if name == "store":
        assert list(envelope)[3:] == ["blob", "size"]
    else:
        assert list(envelope)[3:] == ["data"]
        base64.b64decode(envelope["data"], validate=True)  # base64, no newline
    assert codec.decode(encoded.decode()) == json.loads(TEXT)
