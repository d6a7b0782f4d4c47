"""The only caller of the script: sends `now` and the arguments, decodes replies, maps errors.

Every call uses the reqless-core vocabulary. Errors come back as aqless exceptions raised
from the redis-py originals.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any, Literal

import anyio
from redis.exceptions import (
    BusyLoadingError,
    ClusterError,
    MasterDownError,
    OutOfMemoryError,
    ReadOnlyError,
    ResponseError,
    SlotNotCoveredError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from aqless._connection.batching import PLAIN, Batcher, BatchingPolicy
from aqless._connection.endpoint import Endpoint
from aqless._connection.lean import LeanConnection
from aqless._connection.pop_after import PopAfter
from aqless.errors import (
    ConnectionLostError,
    FlowCycleError,
    FlowError,
    FlowJidTakenError,
    FlowRunningError,
    FlowTooLargeError,
    InvalidArgumentError,
    JobDependedOnError,
    JobNotFoundError,
    LockLostError,
    PayloadError,
    PermissionDeniedError,
    ScriptError,
    ServerFullError,
    ServerUnavailableError,
    SignalRefusedError,
    StaleAttemptError,
)
from aqless.scripts.contracts import exception_name
from aqless.scripts.loader import NO_PERMISSION, AnyRedis, Argument, Call, Reply, Script

Clock = Callable[[], float]

#: What carries the script calls: the lean connection (aqless._connection.lean), or, as a
#: diagnostic, redis-py's pool (benchmarks/connection.py compares them). Pushed jobs and put
#: events keep the lean Subscriber either way.
ScriptConnection = Literal["lean", "redis-py"]

# The script raises as the reference core does, and the server decorates the text:
# "user_script:12: <text> script: ..., on @user_script:12." (user_function under FCALL);
# keep the text.
_DECORATION = re.compile(
    r"^(?:user_(?:script|function):\d+: )?(?P<text>.*?)(?: script: .*)?$", re.DOTALL
)


def error_for(command: str, server_text: str) -> ScriptError:
    """The most specific exception for a refusal of `command` with the server's text."""
    if any(marker in server_text.lower() for marker in NO_PERMISSION):
        # the text itself may say "script: "; only the server's last decoration goes
        return PermissionDeniedError(command, server_text.rsplit(" script: ", 1)[0])
    match = _DECORATION.match(server_text)
    detail = match.group("text") if match else server_text
    # the exception the command's contract names for the text (aqless/scripts/contracts.py);
    # a text no contract names (a JSON decoding error, an assertion) is an invalid argument
    kind = _EXCEPTIONS.get(exception_name(command, detail) or "", InvalidArgumentError)
    return kind(command, detail)


#: The exceptions the contracts name, by name (tests/scripts/test_contracts.py checks that
#: every name a contract gives is here).
_EXCEPTIONS: dict[str, type[ScriptError]] = {
    kind.__name__: kind
    for kind in (
        ScriptError,
        InvalidArgumentError,
        JobNotFoundError,
        LockLostError,
        StaleAttemptError,
        FlowError,
        FlowCycleError,
        FlowJidTakenError,
        FlowTooLargeError,
        JobDependedOnError,
        FlowRunningError,
        SignalRefusedError,
    )
}


# The server's refusals to run a call at all, for now (nothing of it ran): by redis-py's
# exception, or by the error code that starts the text (the LeanConnection keeps codes in the text).
_CONDITION_CLASSES: tuple[tuple[type[Exception], str], ...] = (
    (BusyLoadingError, "LOADING"),
    (ReadOnlyError, "READONLY"),
    (OutOfMemoryError, "OOM"),
    (MasterDownError, "MASTERDOWN"),
)
_CONDITION_CODES = frozenset(
    {"LOADING", "BUSY", "READONLY", "MASTERDOWN", "NOREPLICAS", "OOM", "MISCONF"}
    | {"MOVED", "ASK", "CLUSTERDOWN", "TRYAGAIN"}  # a Cluster moving the slot: nothing ran
)
_FULL = frozenset({"OOM", "MISCONF"})


def server_condition(command: str, error: BaseException) -> ServerUnavailableError | None:
    """The typed error for a server that refused to run `command` just now, or None when
    `error` is something else (a script's refusal, a dropped connection)."""
    text = str(error)
    condition = next((code for kind, code in _CONDITION_CLASSES if isinstance(error, kind)), None)
    if condition is None and isinstance(error, ResponseError):
        code = text.split(" ", 1)[0]
        condition = code if code in _CONDITION_CODES else None
    if condition is None:
        return None
    kind = ServerFullError if condition in _FULL else ServerUnavailableError
    return kind(command, condition, text)


def refusal_for(command: str, error: BaseException) -> Exception | None:
    """The aqless exception for a failed call of `command`, chained to `error`; None for an
    exception aqless does not translate."""
    translated: Exception | None = server_condition(command, error)
    if translated is None:
        if isinstance(error, _UNAVAILABLE):
            translated = ConnectionLostError(f"{command}: {error}")
        elif isinstance(error, ResponseError):
            translated = error_for(command, str(error))
    if translated is not None:
        translated.__cause__ = error
    return translated


# A lost connection, or a Cluster without a healthy node for the slot just now (CLUSTERDOWN,
# TRYAGAIN, a slot not covered while the cluster reconfigures): the call may be tried again.
_UNAVAILABLE = (
    RedisConnectionError,
    RedisTimeoutError,
    OSError,
    ClusterError,
    TryAgainError,
    SlotNotCoveredError,
)


class raising_aqless_errors:
    """Maps redis-py errors to aqless errors, raised from the original. A class rather than
    a generator context manager: it wraps every call the client makes."""

    __slots__ = ("command",)

    def __init__(self, command: str) -> None:
        self.command = command

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, _: TracebackType | None
    ) -> None:
        if error is not None and (refusal := refusal_for(self.command, error)) is not None:
            raise refusal


class Stamps:
    """The `now` of a client's puts: its clock, made later than the last put's by as little
    as orders them. A job waits in its queue under the score ``priority - now / 1e10``
    (CORE 2.3): two puts of one moment tie there, and ties pop in jid order, not in the order
    they were put. So each put's `now` is moved just past the previous one's where the
    score at its priority would not tell them apart (about a microsecond at priority 0)."""

    __slots__ = ("clock", "last")

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.last = -math.inf

    def __call__(self, priority: float) -> float:
        now, last = self.clock(), self.last
        if work_score(priority, now) >= work_score(priority, last):
            step = 1e-6
            now = last + step
            while work_score(priority, now) >= work_score(priority, last):
                step *= 2
                now = last + step
        self.last = now
        return now


def work_score(priority: float, now: float) -> float:
    """A waiting job's score in its queue's work set (as the script computes it)."""
    return priority - now / 10000000000


class ScriptCaller:
    """Calls the script for a client: one connection pool, one key prefix, one clock, and
    the connection the calls go on (`connection`)."""

    def __init__(
        self,
        redis: AnyRedis,
        *,
        prefix: str | None = None,
        clock: Clock = time.time,
        connection: ScriptConnection = "lean",
    ) -> None:
        self.redis = redis
        self.prefix = prefix or "ql:"
        self.clock = clock
        self._put_stamps = Stamps(clock)
        #: where the lean connections go (the Subscriber of pushed jobs too)
        self.endpoint = Endpoint.of(redis, self.prefix)
        self.wire = LeanConnection(self.endpoint)
        lean = connection == "lean"
        self.script = Script(redis, prefix=prefix, wire=self.wire if lean else None)
        self._batcher: Batcher | None = None
        self._known: dict[str, bool] = {}  # see knows()

    @property
    def in_order(self) -> bool:
        """Whether the calls sent one after another run on the server in that order, though
        the first has no reply yet: they go on one connection (the lean one)."""
        return self.script.uses_lean_connection

    def _now(self, priority: float | None) -> str:
        """A call's `now`, as sent; a call that puts a job at `priority` gets one that
        keeps the client's puts in order (see Stamps)."""
        return repr(self.clock() if priority is None else self._put_stamps(priority))

    async def call(
        self,
        command: str,
        *args: Argument,
        priority: float | None = None,
        releases: str | None = None,
    ) -> Any:
        """Call `command`; `priority` for a call that puts a job at that priority (so the
        client's puts of one priority pop in the order they were made); `releases` for a
        call that reports the outcome of the running job of that jid, ending its worker's
        hold on it (see ``call_ordered``)."""
        timed = (self._now(priority), *args)
        if self._batcher is not None:
            submitted = self._batcher.submit((command, timed), releases)
            return await self._batched(command, submitted)
        with raising_aqless_errors(command):
            return await self.script.send(command, timed)

    async def call_ordered(
        self, command: str, arguments: Callable[[Sequence[str]], Sequence[Argument]]
    ) -> Any:
        """A call whose ``arguments(released)`` are made when it is sent, `released` being
        the jids that the calls the server runs just before it in its round trip release
        (their `releases`; see aqless._connection.batching)."""
        if self._batcher is None:
            return await self.call(command, *arguments(()))
        return await self._batched(
            command,
            self._batcher.submit_ordered(
                lambda ahead: (command, (self._now(None), *arguments(ahead)))
            ),
        )

    async def _batched(self, command: str, submitted: Awaitable[Reply]) -> Any:
        with raising_aqless_errors(command):
            reply = await submitted
        if isinstance(reply, BaseException):
            raise refusal_for(command, reply) or reply
        return reply

    def abandon_connection(self, reason: str) -> None:
        """Give up the protocol's own connection, whose calls get no reply: they fail as
        lost, and the next call connects again. (redis-py drops a connection whose call
        was cancelled by itself.)"""
        self.wire.abandon(reason)

    async def close(self) -> None:
        """Close the protocol's own connection (redis-py's stay open)."""
        await self.wire.close()

    def worker_batching(
        self, *, prefetching: bool, on_landed: Callable[[Sequence[str]], None]
    ) -> BatchingPolicy:
        """The batching of a worker: plain, or for one whose pops run ahead (`prefetching`),
        calls made while a pop is in flight go with the next pop and, where this connection
        runs the batches in the order sent (`in_order`), the outcomes in flight count for
        the pops made behind them (`on_landed` told of those that landed)."""
        if not prefetching:
            return PLAIN
        return BatchingPolicy(hold_behind_ordered=True, in_order=self.in_order, on_landed=on_landed)

    @asynccontextmanager
    async def batching(self, policy: BatchingPolicy = PLAIN) -> AsyncIterator[Batcher]:
        """While inside, calls made concurrently share round trips
        (see aqless._connection.batching), as `policy` says, and an outcome and the pop
        behind it share one script call (aqless._connection.pop_after). Nested uses share
        the outer one, and its policy."""
        if self._batcher is not None:
            yield self._batcher
            return
        batcher = Batcher(self._send, pairing=PopAfter(), policy=policy)
        async with anyio.create_task_group() as group:
            await group.start(batcher.run)
            self._batcher = batcher
            try:
                yield batcher
            finally:
                self._batcher = None
                batcher.close()  # run() returns once the queued calls are sent

    async def _send(self, calls: Sequence[Call]) -> list[Any]:
        if len(calls) > 1:
            return await self.script.send_many(calls)
        command, args = calls[0]
        try:
            return [await self.script.send(command, args)]
        except ResponseError as error:  # the refusal goes to its caller, as in a batch
            return [error]

    async def json(self, command: str, *args: Argument) -> Any:
        """A command whose reply is a JSON text (None stays None)."""
        return _decoded(command, await self.call(command, *args))

    async def json_ordered(
        self, command: str, arguments: Callable[[Sequence[str]], Sequence[Argument]]
    ) -> Any:
        """``call_ordered`` for a command whose reply is a JSON text."""
        return _decoded(command, await self.call_ordered(command, arguments))

    async def json_apart_ordered(
        self, command: str, arguments: Callable[[Sequence[str]], Sequence[Argument]]
    ) -> Any:
        """``json_ordered`` for a pop whose `arguments` end with ``DATA_APART``: its jobs
        with their `data` as the stored texts (see ``decoded_apart``)."""
        return decoded_apart(command, await self.call_ordered(command, arguments))

    async def text(
        self,
        command: str,
        *args: Argument,
        priority: float | None = None,
        releases: str | None = None,
    ) -> str:
        reply = await self.call(command, *args, priority=priority, releases=releases)
        if not isinstance(reply, str):
            raise ScriptError(command, f"expected a text, got {reply!r}")
        return reply

    async def integer(self, command: str, *args: Argument, releases: str | None = None) -> int:
        reply = await self.call(command, *args, releases=releases)
        if not isinstance(reply, int):
            raise ScriptError(command, f"expected an integer, got {reply!r}")
        return reply

    async def many(
        self,
        command: str,
        calls: Sequence[Sequence[Argument]],
        priorities: Sequence[float | None] | None = None,
        *,
        then: Sequence[Argument] = (),
        commands: Sequence[str] | None = None,
    ) -> list[Any]:
        """The same command with many argument lists, pipelined in one round trip; with
        `priorities`, calls that put jobs at those priorities (see ``call``). Returns each
        reply, or the aqless exception for a refused call, in order. `then`, a plain
        command, goes right behind them on the same connection (not through a batching
        round trip); its reply, or its redis-py error, comes last. `commands`, one per
        call, replaces `command` call by call."""
        named = [command] * len(calls) if commands is None else commands
        timed = [
            (named[i], (self._now(None if priorities is None else priorities[i]), *args))
            for i, args in enumerate(calls)
        ]
        with raising_aqless_errors(command):
            replies = await self.script.send_many(timed, then=then)
        followed = [replies.pop()] if then else []
        return [
            refusal_for(name, reply) or reply if isinstance(reply, BaseException) else reply
            for name, reply in zip(named, replies, strict=False)
        ] + followed

    async def plain(self, what: str, *argv: Argument) -> Any:
        """The reply to one plain command (not the script: a read of the keys it keeps, a
        worker's record), sent on the protocol's own connection; a refusal or a lost link
        is aqless's typed error, its command named `what`."""
        with raising_aqless_errors(what):
            return await self.wire.call(argv)

    async def plain_many(self, what: str, argvs: Sequence[Sequence[Argument]]) -> list[Any]:
        """The replies to plain commands sent together in one round trip on the protocol's
        own connection; the first refusal raises aqless's typed error, its command named
        `what` (the commands not refused may have run). Not a redis-py pipeline: that one
        words a refusal so that the server's condition (``LOADING``, ``BUSY``,
        ``MISCONF``...) no longer leads its text."""
        if not argvs:
            return []
        with raising_aqless_errors(what):
            replies = await self.wire.pipeline(argvs)
        for reply in replies:
            if isinstance(reply, BaseException):
                raise refusal_for(what, reply) or reply
        return replies

    async def knows(self, name: str) -> bool:
        """Whether the server the calls go to has the command `name` (asked once); a
        server that will not say (an ACL refusing COMMAND) is taken to have it."""
        known = self._known.get(name)
        if known is None:
            with raising_aqless_errors("COMMAND INFO"):
                try:
                    reply = await self.wire.call(("COMMAND", "INFO", name))
                except ResponseError:
                    reply = [True]
            known = self._known[name] = bool(reply) and reply[0] is not None
        return known


def _decoded(command: str, reply: Any) -> Any:
    """The value of a JSON text reply (None stays None)."""
    if reply is None:
        return None
    if not isinstance(reply, str):
        raise ScriptError(command, f"expected a JSON text, got {reply!r}")
    return json.loads(reply)


#: The last argument of aqless's own pops (``rateLimit.pop``, ``queue.popAfter``) that
#: sends each job's data apart from the reply's JSON text, as stored: escaped into it, the
#: data would cost the server time in proportion to its size, and the client a second parse.
DATA_APART = "data_apart"

#: ``DATA_APART`` for aqless's workers: the job objects also leave out their history, which
#: a worker does not read (the server spares reading each job's history list); such a job's
#: ``history`` is empty until it is read again (``Job.refresh``).
DATA_APART_NO_HISTORY = "data_apart_no_history"

#: ``DATA_APART_NO_HISTORY`` for a worker whose jobs' data is big: each job's data is None
#: in its fields, for the worker to read with a plain HMGET (``data_beside``; see
#: aqless._worker.beside): made a Lua string and copied into the script's reply, 100 KB of
#: data costs the server ~5x what the HMGET's reply costs.
DATA_BESIDE = "data_beside"

#: The smallest data that makes a worker pop its queue with ``DATA_BESIDE``.
BESIDE_BYTES = 16384


def decoded_apart(command: str, reply: Any) -> Any:
    """The value of a pop's reply made with ``DATA_APART``: its first item is the JSON text
    of the reply whose job objects have no `data`, the next ones each job's data text, in
    the order of the jobs; each goes back into its object (a text, as `data` is in every job
    object: aqless.job.Job decodes it; None for a data left for the caller to read, with
    ``DATA_BESIDE``)."""
    if not isinstance(reply, list) or not reply:
        raise ScriptError(command, f"expected a list, got {reply!r}")
    value = _decoded(command, reply[0])
    jobs = value.get("jobs") if isinstance(value, dict) else None
    if not isinstance(jobs, list) or len(jobs) != len(reply) - 1:
        raise ScriptError(command, f"expected the data of each job, got {reply!r}"[:200])
    for fields, data in zip(jobs, reply[1:], strict=True):
        fields["data"] = data
    return value


def hash_fields(reply: Any) -> dict[str, str]:
    """An HGETALL reply read through ``ScriptCaller.plain`` (a flat list: field, value, field,
    value...) as a mapping of texts."""
    items = [str(item) for item in reply] if isinstance(reply, list) else []
    return dict(zip(items[::2], items[1::2], strict=True))


# one encoder for all: json.dumps with options builds a new one per call
_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False)


def encode_json(value: object, what: str) -> str:
    """JSON text of `value`, or PayloadError before anything is sent."""
    try:
        return _ENCODER.encode(value)
    except (TypeError, ValueError, RecursionError) as error:  # RecursionError: nested too deep
        raise PayloadError(f"{what} is not JSON-serializable: {error}") from error
