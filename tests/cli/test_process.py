"""The installed `aqless` command as a real process: JSON output, the Lua, exit codes, and
`events` tailing until it is stopped."""

from __future__ import annotations

import json
import signal

import anyio
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

import aqless
from aqless import scripts
from tests.support.cli import entry_point, run_process

pytest_plugins = ["tests.support.client_fixtures"]


async def test_json_queues_from_the_installed_command(
    client: aqless.Client, server_url: str
) -> None:
    await client.queues["emails"].put("app.Send", {})
    result = await anyio.to_thread.run_sync(run_process, server_url, "--json", "queues")
    assert result.returncode == 0, result.stderr
    assert [(q["name"], q["waiting"]) for q in json.loads(result.stdout)] == [("emails", 1)]


async def test_script_prints_the_lua(server_url: str) -> None:
    plain = await anyio.to_thread.run_sync(run_process, server_url, "script")
    library = await anyio.to_thread.run_sync(run_process, server_url, "script", "--library")
    assert plain.stdout == scripts.build()
    assert library.stdout == scripts.build_library()


async def test_no_server_exits_4_from_the_installed_command(tmp_path: object) -> None:
    result = await anyio.to_thread.run_sync(run_process, f"unix://{tmp_path}/x.sock", "queues")
    assert result.returncode == 4
    assert result.stdout == ""
    assert "cannot connect" in result.stderr


@pytest.mark.parametrize(
    ("stop", "as_json"), [(signal.SIGTERM, True), (signal.SIGINT, False)], ids=["json", "lines"]
)
async def test_events_tails_until_stopped(
    client: aqless.Client, server_url: str, stop: signal.Signals, as_json: bool
) -> None:
    command = [
        entry_point(),
        "--url",
        server_url,
        *(["--json"] if as_json else []),
        "events",
        "log",
    ]
    async with await anyio.open_process(command) as process:
        assert process.stdout is not None
        assert process.stderr is not None
        stdout = BufferedByteReceiveStream(process.stdout)
        stderr = BufferedByteReceiveStream(process.stderr)
        try:
            with anyio.fail_after(20):
                ready = await stderr.receive_until(b"\n", 4096)
                assert b"listening on ql:log" in ready
                jid = await client.queues["q"].put("app.Send", {"to": "ann"})
                line = (await stdout.receive_until(b"\n", 4096)).decode()
            if as_json:
                event = json.loads(line)
                assert (event["kind"], event["jid"], event["queue"], event["channel"]) == (
                    "put", jid, "q", "ql:log",
                )  # fmt: skip
            else:
                assert line.split()[1:] == ["put", jid, "queue=q"]
            process.send_signal(stop)
            with anyio.fail_after(10):
                assert await process.wait() == 0
                with pytest.raises(anyio.IncompleteRead):  # one line per event, nothing more
                    await stdout.receive_until(b"\n", 4096)
        finally:
            if process.returncode is None:
                process.kill()
    assert await client.redis.pubsub_numsub("ql:log") == [("ql:log", 0)]


async def test_web_serves_the_dashboard_until_stopped(
    client: aqless.Client, server_url: str
) -> None:
    import httpx

    from tests.web.live_server import free_port

    await client.queues["emails"].put("app.Send", {})
    port = free_port()
    command = [entry_point(), "--url", server_url, "web", "--port", str(port), "--read-only"]
    async with await anyio.open_process(command) as process, httpx.AsyncClient() as http:
        overview: dict[str, object] = {}
        with anyio.fail_after(20):
            while not overview:
                try:
                    reply = await http.get(f"http://127.0.0.1:{port}/api/overview")
                    overview = reply.json()
                except httpx.TransportError:
                    await anyio.sleep(0.1)
        process.send_signal(signal.SIGTERM)
        with anyio.fail_after(10):
            assert await process.wait() == 0
    queues = overview["queues"]
    assert isinstance(queues, list)
    assert [(q["name"], q["waiting"]) for q in queues] == [("emails", 1)]
