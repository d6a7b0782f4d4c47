"""The dashboard and encrypted job data: without a key ring it shows "encrypted (key k2)"
(the key id escaped, as any text of the page), with one (AQLESS_KEYS) the data decrypted."""

from __future__ import annotations

import json

import httpx
import pytest

import aqless
from aqless.codecs import KeyRing, PayloadCodec
from aqless.web import create_app

KEY = KeyRing.new_key()


async def page(client: aqless.Client, path: str) -> str:
    transport = httpx.ASGITransport(app=create_app(client))
    async with httpx.AsyncClient(transport=transport, base_url="http://dash") as http:
        response = await http.get(path)
        assert response.status_code == 200
        return response.text


async def test_the_job_page_shows_encrypted_data_only_with_the_key(
    server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with aqless.Client(server_url, codec=PayloadCodec(keys=KeyRing({"k2": KEY}))) as writer:
        await writer.redis.flushall()
        jid = await writer.queues["q"].put("app.Send", {"email": "ada@example.com"})
        assert "ada@example.com" in await page(writer, f"/jobs/{jid}")
    async with aqless.Client(server_url) as keyless:
        shown = await page(keyless, f"/jobs/{jid}")
        assert "encrypted (key k2)" in shown
        assert "ada@example.com" not in shown
        document = json.loads(await page(keyless, f"/api/jobs/{jid}"))
        assert document["job"]["data"] == "encrypted (key k2)"
    monkeypatch.setenv("AQLESS_KEYS", f"k2:{KeyRing.encoded(KEY)}")
    async with aqless.Client(server_url) as given:
        assert "ada@example.com" in await page(given, f"/jobs/{jid}")


async def test_a_key_id_from_the_server_is_escaped(server_url: str) -> None:
    async with aqless.Client(server_url) as client:
        await client.redis.flushall()
        jid = await client.queues["q"].put("app.Send", {})
        envelope = {"aqless:codec": 1, "codecs": ["aes-gcm"], "key": "<b>k9</b>", "data": ""}
        await client.redis.hset(f"ql:j:{jid}", "data", json.dumps(envelope))
        shown = await page(client, f"/jobs/{jid}")
        assert "<b>k9</b>" not in shown
        assert "encrypted (key &lt;b&gt;k9&lt;/b&gt;)" in shown
