"""The CLI and encrypted job data: ``aqless get`` shows "encrypted (key k2)" without a key
ring, the data decrypted with one (AQLESS_KEYS, read through the rule codec.keys)."""

from __future__ import annotations

import pytest

import aqless
from aqless.codecs import KeyRing, PayloadCodec
from tests.support.cli import Cli

KEY = KeyRing.new_key()


async def test_get_shows_encrypted_data_only_with_the_key(
    server_url: str, run_cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with aqless.Client(server_url, codec=PayloadCodec(keys=KeyRing({"k2": KEY}))) as writer:
        await writer.redis.flushall()
        jid = await writer.queues["q"].put("app.Send", {"email": "ada@example.com"})
    keyless = await run_cli("get", jid, "--json")
    assert keyless.json()["data"] == "encrypted (key k2)"
    table = await run_cli("get", jid)
    assert "encrypted (key k2)" in table.stdout
    assert "ada@example.com" not in table.stdout
    monkeypatch.setenv("AQLESS_KEYS", f"k2:{KeyRing.encoded(KEY)}")
    assert (await run_cli("get", jid, "--json")).json()["data"] == {"email": "ada@example.com"}
    monkeypatch.setenv("AQLESS_KEYS", "k2:not-base64!")
    refused = await run_cli("get", jid)
    assert refused.code != 0
    assert "keys" in refused.stderr
