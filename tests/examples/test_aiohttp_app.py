"""examples/aiohttp_app.py over real HTTP: aiohttp's server on a free port, httpx as client."""

from __future__ import annotations

import httpx
import pytest
from aiohttp import web

import aqless
from tests.support.examples import load_example, read_events

aiohttp_app = load_example("aiohttp_app")


@pytest.mark.deployments(
    "valkey9",
    reason="the example's web app over real HTTP; the calls it makes run on Valkey 9 and "
    "Redis 7 in the client tests",
)
async def test_put_from_a_handler_and_stream_its_events(server_url: str) -> None:
    async with aqless.Client(server_url) as client:
        await client.redis.flushall()
    runner = web.AppRunner(aiohttp_app.create_app(server_url), shutdown_timeout=5)
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
            async with http.stream("GET", "/events") as stream:
                assert stream.headers["content-type"].startswith("text/event-stream")
                lines = stream.aiter_lines()
                assert await anext(lines) == ": subscribed"
                jid = (await http.post("/signups", json={"email": "ann@example.com"})).json()["jid"]
                events = await read_events(lines, until="completed")
            assert events[0] == ("put", {"jid": jid, "queue": "signups", "to": None})
            assert events[-1][0] == "completed"
            assert (await http.get(f"/jobs/{jid}")).json() == {
                "jid": jid,
                "state": "complete",
                "queue": "",
            }
            assert (await http.get("/jobs/nope")).status_code == 404
            assert (await http.post("/signups", json={"name": "x"})).status_code == 422
    finally:
        await runner.cleanup()
