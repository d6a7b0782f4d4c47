"""The part every test proxy shares: a listener on a free loopback port (``url`` names it)
whose connections a subclass serves, and the tasks it starts and the connections it holds,
all ended with the block (a connection left open past its loop warns when collected, in
whichever test runs then)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from types import TracebackType
from typing import Any, Self
from urllib.parse import urlsplit


class LoopbackProxy:
    """``async with Proxy(...) as proxy``: connect to ``proxy.url`` instead of the server."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._server: asyncio.Server | None = None
        self.url = ""

    async def __aenter__(self) -> Self:
        self._server = await asyncio.start_server(self._accepted, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"redis://127.0.0.1:{port}"
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._server is not None:
            self._server.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for writer in self._writers:
            writer.close()
        self._writers.clear()

    def held(self, writer: asyncio.StreamWriter) -> asyncio.StreamWriter:
        """`writer`, closed with the block if it is still open then."""
        self._writers.add(writer)
        return writer

    async def upstream(self, server_url: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """A connection to the server (`open_upstream`), closed with the block."""
        reader, writer = await open_upstream(server_url)
        return reader, self.held(writer)

    async def _accepted(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await self._serve(reader, self.held(writer))

    def _spawn(self, job: Coroutine[Any, Any, None]) -> None:
        """Run `job` until it ends or the block does."""
        task = asyncio.create_task(job)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raise NotImplementedError


async def open_upstream(server_url: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection to the server `server_url` names (``unix://`` or ``redis://``)."""
    target = urlsplit(server_url)
    if target.scheme == "unix":
        return await asyncio.open_unix_connection(target.path)
    return await asyncio.open_connection(target.hostname or "localhost", target.port or 6379)
