"""A lean connection for script calls: one socket, every call pipelined on it.

redis-py checks a connection out of its pool for each call or pipeline, packs commands in
Python and reads each reply under a timer of its own: about 60 µs of client CPU per round
trip and 15 µs per pipelined call on a slow machine. A ``LeanConnection`` keeps one connection per
client and event loop, packs with hiredis (C), writes every call at once (calls made in the
same turn of the event loop share one write), and matches replies to callers in order (of
the replies one read brings, the first caller's at once, the others a turn later). One
timer per connection, not per call, enforces the socket timeout: a connection that says
nothing for that long while a call waits is dropped (a call that blocks on purpose, WAITAOF,
gets its own timeout on top). Without a ``socket_timeout`` it is the endpoint's
REPLY_TIMEOUT: a network partition answers nothing and resets nothing.

It serves every kind of deployment: its ``Endpoint`` (aqless._connection.endpoint) says where
to connect (TCP, a Unix socket, TLS, the primary Sentinel names, the node of a Cluster that
holds the deployment's slot) and how to greet the server. A reply saying the connection is
not the right one any more (``READONLY``, ``MOVED``...) retires it: the calls already sent on
it get their replies, the next call connects again, to the address resolved again; a call
that got ``MOVED`` did not run, and is sent once more to the node the reply names.

A call whose connection drops fails with redis-py's ``ConnectionError`` (the caller maps it
to ConnectionLostError): the server may or may not have run it, so it is never resent. The
next call connects again.
"""

from __future__ import annotations

import asyncio
import select
import time
from collections import deque
from collections.abc import Callable, Sequence
from itertools import chain
from typing import Any, TypeVar

import hiredis
from redis.exceptions import AuthenticationError, ResponseError
from redis.exceptions import ConnectionError as RedisConnectionError

from aqless._connection.endpoint import Endpoint
from aqless.scripts.loader import Argument, refusal

__all__ = ["LeanConnection"]


NO_MORE = object()  # what the reader gives back when a reply is incomplete


def pack(argv: Sequence[Argument]) -> bytes:
    """One command in the wire format (hiredis's stub wrongly types it as a 1-tuple)."""
    packed: bytes = hiredis.pack_command(tuple(argv))  # type: ignore[arg-type]
    return packed


#: From this size a bytes argument (a put's encoded data) goes on the wire as it is, between
#: its header and its end, rather than copied into the packed command (and the command into
#: the pipeline's buffer): fresh copies of large data cost the client more than encoding it.
_APART = 16 * 1024


def pieces(argv: Sequence[Argument]) -> list[bytes]:
    """One command in the wire format, as buffers to write one after another: ``pack``'s,
    with each large bytes argument a buffer of its own, not copied."""
    if not any(type(a) is bytes and len(a) >= _APART for a in argv):
        return [pack(argv)]
    parts = [b"*%d\r\n" % len(argv)]
    run: list[Argument] = []  # small arguments, packed together
    for argument in argv:
        if type(argument) is bytes and len(argument) >= _APART:
            if run:
                packed = pack(run)
                parts.append(packed[packed.index(b"\n") + 1 :])  # less its own array header
                run = []
            parts += [b"$%d\r\n" % len(argument), argument, b"\r\n"]
        else:
            run.append(argument)
    if run:
        packed = pack(run)
        parts.append(packed[packed.index(b"\n") + 1 :])
    return parts


class _Waiter:
    """A caller waiting for one call's reply (`expected` 0) or a pipeline's `expected`."""

    __slots__ = ("expected", "future", "replies", "sent")

    def __init__(self, future: asyncio.Future[Any], expected: int, sent: float) -> None:
        self.future = future
        self.expected = expected
        self.replies: list[Any] = []
        self.sent = sent


class RespStream(asyncio.Protocol):
    """One open connection: writes what it is given, hands each reply to its waiter."""

    def __init__(self, reader: hiredis.Reader, timeout: float | None) -> None:
        self._reader = reader
        self._timeout = timeout
        self._transport: asyncio.Transport | None = None
        self._waiters: deque[_Waiter] = deque()
        self._unsent: list[bytes] = []  # buffers to write at the end of this turn
        self.loop = asyncio.get_running_loop()
        self._watchdog: asyncio.TimerHandle | None = None
        self._idle_check: select.poll | None = None
        self.lost: BaseException | None = None
        self._heard = 0.0  # when the server last sent anything (watched connections only)
        self._retired = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]  # a stream's: it writes
        socket = transport.get_extra_info("socket")
        if socket is not None and hasattr(select, "poll"):
            self._idle_check = select.poll()
            self._idle_check.register(socket.fileno(), select.POLLIN)

    def usable(self) -> bool:
        """False once the connection is lost, or when the server closed it (or sent
        something) while no call was waiting and the event loop has not noticed yet: a call
        sent on it would fail although the server never saw it."""
        if self.lost is not None:
            return False
        if self._waiters or self._idle_check is None:
            return True
        if self._idle_check.poll(0):
            self.abort(RedisConnectionError("the server closed the connection"))
            return False
        return True

    def send(self, packed: list[bytes], expected: int, blocks: float = 0.0) -> asyncio.Future[Any]:
        """Write `packed`, buffers of one or more commands, and wait for `expected` replies
        (0: one reply, not in a list), `blocks` seconds more than the socket timeout (the
        server holds the reply that long on purpose: see ``blocking``)."""
        future: asyncio.Future[Any] = self.loop.create_future()
        if self.lost is not None:
            future.set_exception(dropped(self.lost))
            return future
        if self._unsent:
            self._unsent += packed  # joins the write at the end of this turn
        elif self._transport is not None and not self._waiters:
            self._write(packed)  # idle: at once, rather than a turn later
        else:
            self._unsent += packed
            self.loop.call_soon(self._flush)  # later calls of this turn join the write
        sent = time.monotonic() + blocks if self._timeout else 0.0  # the watchdog reads it
        self._waiters.append(_Waiter(future, expected, sent))
        if self._watchdog is None and self._timeout:
            self._watchdog = self.loop.call_later(self._timeout, self._watch)
        return future

    def _flush(self) -> None:
        if self._unsent and self._transport is not None and self.lost is None:
            unsent, self._unsent = self._unsent, []
            self._write(unsent)

    def _write(self, buffers: list[bytes]) -> None:
        assert self._transport is not None  # noqa: S101 (connected: the callers check)
        if len(buffers) == 1:
            self._transport.write(buffers[0])
        else:  # uvloop writes them as they are (writev); asyncio joins them
            self._transport.writelines(buffers)

    def data_received(self, data: bytes) -> None:
        if self._timeout:
            self._heard = time.monotonic()
        reader = self._reader
        answered: list[tuple[_Waiter, Any]] = []
        try:
            reader.feed(data)
            while (reply := reader.gets()) is not NO_MORE:
                self._deliver(reply, answered)
        except hiredis.ProtocolError as error:
            self.abort(RedisConnectionError(f"the server's reply is garbled: {error}"))
        if answered:
            # the first caller now; the others a turn later: what the first sends in reply
            # (a worker's next pop) is written before their replies are read (two pops on
            # their way would otherwise land, and go again, together)
            _answer(*answered[0])
            if len(answered) > 1:
                self.loop.call_soon(_answer_all, answered[1:])
        if self._retired and not self._waiters:
            self.close()

    def _deliver(self, reply: Any, answered: list[tuple[_Waiter, Any]] | None = None) -> None:
        """Hand `reply` to its waiter: at once, or (`answered`) by the caller."""
        if not self._waiters:  # nobody asked: the connection is out of step
            raise hiredis.ProtocolError(f"a reply nobody waits for: {reply!r:.80}")
        waiter = self._waiters[0]
        if isinstance(reply, hiredis.ReplyError):
            reply = refusal(str(reply))
        if waiter.expected:
            waiter.replies.append(reply)  # a pipeline: errors stay in place
            if len(waiter.replies) < waiter.expected:
                return
            reply = waiter.replies
        self._waiters.popleft()
        if answered is not None:
            answered.append((waiter, reply))
            return
        _answer(waiter, reply)
        if self._retired and not self._waiters:
            self.close()

    def eof_received(self) -> bool:
        self.connection_lost(None)
        return False  # the transport closes itself

    def _watch(self) -> None:
        """Drop a connection that has said nothing for the socket timeout while a call
        waits: its oldest call waited that long, and no reply to the calls ahead of it came
        meanwhile (a pipeline of many slow calls, each answered in turn, goes on)."""
        self._watchdog = None
        if not self._waiters or self.lost is not None or not self._timeout:
            return
        waited = time.monotonic() - max(self._waiters[0].sent, self._heard)
        if waited >= self._timeout:
            self.abort(RedisConnectionError(f"no reply within {self._timeout} s"))
        else:
            self._watchdog = self.loop.call_later(self._timeout - waited, self._watch)

    def abort(self, error: BaseException) -> None:
        if self._transport is not None:
            self._transport.abort()
        self.connection_lost(error)

    def connection_lost(self, error: BaseException | None) -> None:
        if self.lost is not None:
            return
        self.lost = error or RedisConnectionError("the server closed the connection")
        if self._watchdog is not None:
            self._watchdog.cancel()
        waiters, self._waiters, self._unsent = self._waiters, deque(), []
        for waiter in waiters:
            if not waiter.future.done():
                waiter.future.set_exception(dropped(self.lost))

    def close(self) -> None:
        if self._transport is not None and not self.loop.is_closed():
            self._flush()
            self._transport.close()

    def retire(self) -> None:
        """Close once the calls sent on it have their replies (none is sent on it again)."""
        self._retired = True
        if not self._waiters:
            self.close()


def _answer(waiter: _Waiter, reply: Any) -> None:
    if waiter.future.done():  # its caller was cancelled meanwhile
        return
    if not waiter.expected and isinstance(reply, ResponseError):
        waiter.future.set_exception(reply)
    else:
        waiter.future.set_result(reply)


def _answer_all(answered: list[tuple[_Waiter, Any]]) -> None:
    for waiter, reply in answered:
        _answer(waiter, reply)


#: The commands whose server holds the reply for as long as their last argument says (in
#: milliseconds): the durable puts' WAITAOF, and WAIT.
_BLOCKING = frozenset({"WAIT", "WAITAOF", b"WAIT", b"WAITAOF"})


def blocking(argv: Sequence[Argument]) -> float:
    """Seconds the server may hold the reply to `argv` on purpose (0 for most commands)."""
    if not argv or not isinstance(argv[0], str | bytes) or argv[0] not in _BLOCKING:
        return 0.0
    return float(argv[-1]) / 1000


def _retrieved(task: asyncio.Task[Any]) -> None:
    """Mark a shared connect's failure seen: its waiters may all have gone."""
    if not task.cancelled():
        task.exception()


def uncancelled() -> bool:
    """True when a CancelledError reached the current task without anyone cancelling it:
    it came from a future the task awaited (another task's work, stopped), and means that
    work failed, not that this task is to stop."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() == 0


def dropped(cause: BaseException) -> RedisConnectionError:
    if isinstance(cause, RedisConnectionError):
        return cause
    error = RedisConnectionError(f"the connection to the server was lost: {cause}")
    error.__cause__ = cause
    return error


class LeanConnection:
    """Script calls of one client over one lazily opened connection (per event loop)."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self._follows = endpoint.follows()  # error codes that retire the connection
        self._link: RespStream | None = None
        self._connecting: asyncio.Future[RespStream] | None = None
        self._closed = False

    async def call(self, argv: Sequence[Argument]) -> Any:
        """The reply to one command (raising a refusal as redis-py's ResponseError)."""
        packed = pieces(argv)
        blocks = blocking(argv)
        if not self._follows:
            return await self._send(packed, 0, blocks)
        try:
            return await self._send(packed, 0, blocks)
        except ResponseError as error:
            if not self._redirected(error):
                raise
        # MOVED: it did not run; once more, on the new node
        return await self._send(packed, 0, blocks)

    async def pipeline(self, argvs: Sequence[Sequence[Argument]]) -> list[Any]:
        """The replies to commands sent together; a refusal is its ResponseError, in place."""
        packed = [pieces(argv) for argv in argvs]
        blocks = max(map(blocking, argvs), default=0.0)
        replies: list[Any] = await self._send(list(chain.from_iterable(packed)), len(argvs), blocks)
        if self._follows:
            moved = [
                n
                for n, reply in enumerate(replies)
                if isinstance(reply, ResponseError) and self._redirected(reply)
            ]
            if moved:  # they did not run: once more, together, on the new node
                again_packed = list(chain.from_iterable(packed[n] for n in moved))
                again = await self._send(again_packed, len(moved))
                for n, reply in zip(moved, again, strict=True):
                    replies[n] = reply
        return replies

    def _redirected(self, error: ResponseError) -> bool:
        """Retire the connection if `error` says it is not the right one any more; True
        for a MOVED reply, whose call may be sent once more."""
        text = str(error)
        if not text.startswith(self._follows):
            return False
        link, self._link = self._link, None
        if link is not None:
            link.retire()
        return self.endpoint.moved(text)

    async def _send(self, packed: list[bytes], expected: int, blocks: float = 0.0) -> Any:
        link = self._link
        if link is None or link.loop is not asyncio.get_running_loop() or not link.usable():
            if self._closed:
                raise RedisConnectionError("the client is closed")
            if link is not None:
                link.close()  # another loop's (a connection serves one loop)
            link = await self._connect()
        return await link.send(packed, expected, blocks)

    async def _connect(self) -> RespStream:
        """The new connection, opened by a task of its own that every caller waiting for it
        shares: a caller's deadline or cancellation ends its own wait, never the connect
        (which the endpoint's connect timeout bounds), so the others still get it."""
        loop = asyncio.get_running_loop()
        connecting = self._connecting
        if connecting is None or connecting.get_loop() is not loop:
            self._connecting = connecting = loop.create_task(self._open())
            connecting.add_done_callback(_retrieved)
        try:
            return await asyncio.shield(connecting)
        except asyncio.CancelledError:
            if uncancelled():  # the connect was stopped, not this caller: the loop ends
                raise RedisConnectionError("the connect was interrupted") from None
            raise

    async def _open(self) -> RespStream:
        try:
            link = await open_stream(self.endpoint, RespStream)
            if self._closed:  # closed while connecting
                link.close()
                raise RedisConnectionError("the client is closed")
        finally:
            self._connecting = None
        self._link = link
        return link

    def abandon(self, reason: str) -> None:
        """Drop the connection: its calls fail with `reason`, the next call connects again.
        Called from the event loop that uses it (another loop's is replaced anyway)."""
        link = self._link
        if link is not None and link.lost is None and link.loop is asyncio.get_running_loop():
            link.abort(RedisConnectionError(reason))

    async def close(self) -> None:
        self._closed = True
        link, self._link = self._link, None
        if link is not None and link.lost is None:
            link.close()


StreamType = TypeVar("StreamType", bound=RespStream)


async def open_stream(
    endpoint: Endpoint,
    make: Callable[[hiredis.Reader, float | None], StreamType],
    *,
    decode: bool | None = None,
) -> StreamType:
    """A connection to `endpoint` made by `make(reader, reply_timeout)`, greeted as
    redis-py would: authenticated, its database selected and its name set. Its replies are
    decoded as the endpoint's options say, unless `decode` says otherwise."""
    options = endpoint.options
    reader_options: dict[str, Any] = {"notEnoughData": NO_MORE}
    if options.get("decode_responses") if decode is None else decode:
        reader_options["encoding"] = options.get("encoding", "utf-8")
        reader_options["errors"] = options.get("encoding_errors", "strict")

    def link() -> StreamType:
        return make(hiredis.Reader(**reader_options), endpoint.reply_timeout)

    opened = await endpoint.open(link)
    hello = await endpoint.greeting()
    try:
        async with asyncio.timeout(endpoint.connect_timeout):
            await _greet(hello, opened)
    except TimeoutError:
        raise RedisConnectionError(
            f"no reply to the greeting within {endpoint.connect_timeout:g} s"
        ) from None
    return opened


async def _greet(hello: Sequence[tuple[Argument, ...]], link: RespStream) -> None:
    if not hello:
        return
    packed = [pack(command) for command in hello]
    try:
        replies: list[Any] = await link.send(packed, len(hello))
    except BaseException:
        link.abort(RedisConnectionError("greeting interrupted"))
        raise
    for reply in replies:
        if isinstance(reply, BaseException):  # a wrong password, or no such database
            link.abort(RedisConnectionError(str(reply)))
            refused = AuthenticationError if "WRONGPASS" in str(reply) else RedisConnectionError
            raise refused(f"the server refused the connection: {reply}") from reply
