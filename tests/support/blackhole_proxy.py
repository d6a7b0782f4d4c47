"""A TCP proxy to the test server that a test can cut off and reconnect, as a network
partition does: nothing is reset, packets just vanish.

While cut, every connection open stays open and what either side sends is dropped (such a
connection stays silent for good, as one whose packets were lost is out of step anyway), and
a new connection hangs in its handshake: the proxy stops accepting, so once the listener's
queue of one is full the kernel drops every SYN (the one queued is held silent too). Once
healed, new connections work."""

from __future__ import annotations

import asyncio
import socket
from typing import Self

from tests.support.loopback_proxy import LoopbackProxy

_CHUNK = 65536
_BACKLOG = 128


class _Pair:
    silent = False


class BlackholeProxy(LoopbackProxy):
    """``async with BlackholeProxy(server_url) as proxy``: connect to ``proxy.url``; then
    ``proxy.cut()`` and ``proxy.heal()``."""

    def __init__(self, server_url: str) -> None:
        super().__init__()
        self._server_url = server_url
        self._pairs: list[_Pair] = []
        self._listener: socket.socket | None = None
        self._plug: socket.socket | None = None  # fills the listener's queue while cut
        self._sockets: set[socket.socket] = set()  # closed with the block, served or not
        self.cut_off = False
        self.cuts = 0

    async def __aenter__(self) -> Self:
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(_BACKLOG)
        listener.setblocking(False)
        self._listener = listener
        self.url = f"redis://127.0.0.1:{listener.getsockname()[1]}"
        asyncio.get_running_loop().add_reader(listener, self._accept)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await super().__aexit__(None, None, None)
        for connection in self._sockets:
            connection.close()
        if self._listener is not None:
            asyncio.get_running_loop().remove_reader(self._listener)
            self._listener.close()
        if self._plug is not None:
            self._plug.close()

    def silence(self) -> int:
        """Silence every connection open now, for good (connections opened afterwards work,
        as when a firewall forgets the connections it had); returns how many."""
        silenced = len(self._pairs)
        for pair in self._pairs:
            pair.silent = True
        self._pairs = []
        return silenced

    def cut(self) -> None:
        """Partition: every connection open now goes silent for good; new ones hang (the
        proxy stops accepting, and fills the listener's queue of one itself)."""
        assert self._listener is not None
        self.cuts += 1
        self.cut_off = True
        asyncio.get_running_loop().remove_reader(self._listener)
        self._listener.listen(0)  # a queue of one: the SYNs after it are dropped
        self._plug = socket.socket()
        self._plug.setblocking(False)
        self._plug.connect_ex(self._listener.getsockname())
        self.silence()

    def heal(self) -> None:
        """End the partition: connections made from now on work."""
        assert self._listener is not None
        while True:  # the ones queued while cut never got through
            try:
                queued, _ = self._listener.accept()
            except BlockingIOError:
                break
            self._sockets.add(queued)
            self._spawn(self._swallow(queued))
        if self._plug is not None:
            self._plug.close()
            self._plug = None
        self._listener.listen(_BACKLOG)
        self.cut_off = False
        asyncio.get_running_loop().add_reader(self._listener, self._accept)

    def _accept(self) -> None:
        assert self._listener is not None
        try:
            connection, _ = self._listener.accept()
        except BlockingIOError:
            return
        self._sockets.add(connection)
        self._spawn(self._serve_socket(connection))

    async def _swallow(self, connection: socket.socket) -> None:
        """Hold a connection that came through a cut open, dropping what it sends."""
        reader, writer = await asyncio.open_connection(sock=connection)
        pair = _Pair()
        pair.silent = True
        self._spawn(self._pump(reader, self.held(writer), pair))

    async def _serve_socket(self, connection: socket.socket) -> None:
        reader, writer = await asyncio.open_connection(sock=connection)
        await self._serve(reader, self.held(writer))

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await self.upstream(self._server_url)
        pair = _Pair()
        if self.cut_off:
            pair.silent = True
        else:
            self._pairs.append(pair)
        for source, sink in ((reader, up_writer), (up_reader, writer)):
            self._spawn(self._pump(source, sink, pair))

    @staticmethod
    async def _pump(source: asyncio.StreamReader, sink: asyncio.StreamWriter, pair: _Pair) -> None:
        """Carry one direction, or drop it once silent; close the other side at its end."""
        try:
            while data := await source.read(_CHUNK):
                if not pair.silent:
                    sink.write(data)
                    await sink.drain()
        except ConnectionError:
            pass
        finally:
            sink.close()
