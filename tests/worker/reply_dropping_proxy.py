"""A TCP proxy to the test server that loses one reply, or one published message, on a
flaky link: the call reaches the server and runs, but what the server sends back is
dropped and the client's side of that connection is reset, as when a link fails between
a request and its reply. Connections opened afterwards work."""

from __future__ import annotations

import asyncio
import contextlib

from tests.support.loopback_proxy import LoopbackProxy


class _Link:
    doomed = False  # a request whose reply is to be lost went up this connection


class ReplyDroppingProxy(LoopbackProxy):
    def __init__(self, server_url: str) -> None:
        super().__init__()
        self._server_url = server_url
        self._request: bytes | None = None
        self._message: bytes | None = None
        #: what the server sent that never reached the client
        self.dropped: list[bytes] = []

    def drop_reply_to(self, marker: bytes) -> None:
        """The next request holding `marker` runs; its reply (and any other reply on that
        connection read with it) is lost, and the connection reset."""
        self._request = marker

    def drop_message(self, marker: bytes) -> None:
        """The next chunk the server sends holding `marker` (a published message, say) is
        lost, and its connection reset."""
        self._message = marker

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await self.upstream(self._server_url)
        link = _Link()
        self._spawn(self._requests(reader, up_writer, link))
        self._spawn(self._replies(up_reader, writer, link))

    async def _requests(
        self, source: asyncio.StreamReader, sink: asyncio.StreamWriter, link: _Link
    ) -> None:
        try:
            with contextlib.suppress(ConnectionError):
                while data := await source.read(65536):
                    if self._request is not None and self._request in data:
                        self._request = None
                        link.doomed = True  # before the request goes: its reply may be quick
                    sink.write(data)
                    await sink.drain()
        finally:
            sink.close()

    async def _replies(
        self, source: asyncio.StreamReader, sink: asyncio.StreamWriter, link: _Link
    ) -> None:
        try:
            with contextlib.suppress(ConnectionError):
                while data := await source.read(65536):
                    message = self._message
                    if link.doomed or (message is not None and message in data):
                        if not link.doomed:
                            self._message = None
                        self.dropped.append(data)
                        sink.transport.abort()
                        return
                    sink.write(data)
                    await sink.drain()
        finally:
            sink.close()
