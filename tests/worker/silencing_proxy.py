"""A TCP proxy to the test server whose connections can be made to go silent: what either
side sends is dropped, and the sockets stay open, as when a server's host vanishes or a
firewall forgets the connection. Connections opened afterwards work."""

from __future__ import annotations

import asyncio

from tests.support.loopback_proxy import LoopbackProxy, open_upstream


class _Pair:
    silent = False


class SilencingProxy(LoopbackProxy):
    def __init__(self, server_url: str) -> None:
        super().__init__()
        self._server_url = server_url
        self._pairs: list[_Pair] = []

    def silence(self) -> int:
        """Silence every connection open now, for good; returns how many."""
        for pair in self._pairs:
            pair.silent = True
        return len(self._pairs)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await open_upstream(self._server_url)
        pair = _Pair()
        self._pairs.append(pair)
        for source, sink in ((reader, up_writer), (up_reader, writer)):
            self._spawn(self._pump(source, sink, pair))

    @staticmethod
    async def _pump(source: asyncio.StreamReader, sink: asyncio.StreamWriter, pair: _Pair) -> None:
        try:
            while data := await source.read(65536):
                if not pair.silent:
                    sink.write(data)
                    await sink.drain()
        finally:
            sink.close()
