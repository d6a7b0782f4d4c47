"""A slow, lossy network on loopback: a TCP proxy in front of a server that delays what it
carries (a mean plus or minus a jitter, each direction of each connection on its own, bytes
kept in order), now and then stalls a direction for a while, and now and then resets a
connection (both sockets aborted, as a dropped NAT entry or a middlebox's RST does).

Every decision is drawn per chunk read, from a generator seeded by the proxy's seed and the
connection's number, so a run's faults depend on its traffic and its seed only."""

from __future__ import annotations

import asyncio
import contextlib
import random
from dataclasses import dataclass

from tests.support.loopback_proxy import LoopbackProxy

_CHUNK = 65536


@dataclass(frozen=True, slots=True)
class Conditions:
    """What the network does to each chunk (one read of a socket, one direction)."""

    delay: float = 0.05  # seconds, the mean one-way delay
    jitter: float = 0.025  # seconds either side of the mean, uniformly
    stall_chance: float = 0.0  # per chunk: the direction carries nothing for stall_seconds
    stall_seconds: float = 1.0
    reset_chance: float = 0.0  # per chunk: the connection is reset instead
    seed: int = 0


@dataclass(slots=True)
class Tally:
    """What the proxy did so far."""

    connections: int = 0
    chunks: int = 0
    stalls: int = 0
    resets: int = 0


class _Link:
    """One connection, both directions; aborting it drops whatever is still in flight."""

    def __init__(self, client: asyncio.StreamWriter, server: asyncio.StreamWriter) -> None:
        self.writers = (client, server)
        self.aborted = False

    def abort(self) -> None:
        self.aborted = True
        for writer in self.writers:
            writer.transport.abort()


class NetemProxy(LoopbackProxy):
    """``async with NetemProxy("127.0.0.1", port, Conditions(...)) as proxy``: connect to
    ``proxy.url`` instead of the server."""

    def __init__(self, host: str, port: int, conditions: Conditions) -> None:
        super().__init__()
        self._target = (host, port)
        self.conditions = conditions
        self.tally = Tally()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self._target)
        except OSError:
            writer.transport.abort()
            return
        self.held(up_writer)
        self.tally.connections += 1
        chance = random.Random(f"{self.conditions.seed}:{self.tally.connections}")  # noqa: S311
        link = _Link(writer, up_writer)
        for source, sink in ((reader, up_writer), (up_reader, writer)):
            in_flight: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()
            carry = self._carry(source, in_flight, link, chance)
            self._spawn(carry)
            self._spawn(self._deliver(in_flight, sink, link))

    async def _carry(
        self,
        source: asyncio.StreamReader,
        in_flight: asyncio.Queue[tuple[float, bytes]],
        link: _Link,
        chance: random.Random,
    ) -> None:
        """Read one direction and stamp each chunk with when it may arrive."""
        conditions, loop = self.conditions, asyncio.get_running_loop()
        arrives = 0.0  # a chunk never overtakes the one before it
        with contextlib.suppress(ConnectionError):
            while not link.aborted and (data := await source.read(_CHUNK)):
                self.tally.chunks += 1
                if chance.random() < conditions.reset_chance:
                    self.tally.resets += 1
                    link.abort()
                    break
                delay = conditions.delay + chance.uniform(-conditions.jitter, conditions.jitter)
                if chance.random() < conditions.stall_chance:
                    self.tally.stalls += 1
                    delay += conditions.stall_seconds
                arrives = max(arrives, loop.time() + delay)
                in_flight.put_nowait((arrives, data))
        in_flight.put_nowait((0.0, b""))  # the end of the stream

    @staticmethod
    async def _deliver(
        in_flight: asyncio.Queue[tuple[float, bytes]], sink: asyncio.StreamWriter, link: _Link
    ) -> None:
        """Write each chunk once it is due; close the other side after the last."""
        loop = asyncio.get_running_loop()
        try:
            while (item := await in_flight.get())[1]:
                arrives, data = item
                await asyncio.sleep(max(0.0, arrives - loop.time()))
                if link.aborted:
                    break
                sink.write(data)
                await sink.drain()
        except ConnectionError:
            pass
        finally:
            sink.close()
