"""The dashboard served by uvicorn on a free localhost port, from a thread of its own with
its own event loop and Client; tests drive that Client through `LiveServer.run`."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Any, TypeVar

import uvicorn

import aqless
from aqless.web import create_app

T = TypeVar("T")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class LiveServer:
    def __init__(self, loop: asyncio.AbstractEventLoop, client: aqless.Client, url: str) -> None:
        self.loop = loop
        self.client = client
        self.url = url

    def run(self, work: Callable[[aqless.Client], Awaitable[T]], timeout: float = 10) -> T:
        """Run `work(client)` on the server's loop and return its result."""

        async def call() -> T:
            return await work(self.client)

        return asyncio.run_coroutine_threadsafe(call(), self.loop).result(timeout)


@contextmanager
def live_server(server_url: str, **options: Any) -> Iterator[LiveServer]:
    loop = asyncio.new_event_loop()
    ready: Future[LiveServer] = Future()
    stop = asyncio.Event()

    async def main() -> None:
        async with aqless.Client(server_url) as client:
            port = free_port()
            config = uvicorn.Config(
                create_app(client, live_interval=0.2, **options),
                host="127.0.0.1",
                port=port,
                lifespan="off",
                log_level="warning",
                timeout_graceful_shutdown=1,
            )
            server = uvicorn.Server(config)
            serving = asyncio.ensure_future(server.serve())
            while not server.started:
                if serving.done():
                    serving.result()
                await asyncio.sleep(0.01)
            ready.set_result(LiveServer(loop, client, f"http://127.0.0.1:{port}"))
            await stop.wait()
            server.should_exit = True
            await serving

    thread = threading.Thread(target=loop.run_until_complete, args=(main(),), daemon=True)
    thread.start()
    try:
        yield ready.result(timeout=30)
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(timeout=10)
        loop.close()
