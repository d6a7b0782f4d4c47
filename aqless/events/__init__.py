"""The qless pubsub channels as typed events, and waiting for a job to finish.

The script publishes on ``ql:log`` (every job, JSON), ``ql:w:<worker>`` (JSON, to a worker
that loses a job) and on one channel per tracked-job event (``ql:put``, ``ql:completed``...,
the bare jid). docs/protocol/CORE.md section 7 and docs/protocol/REQLESS.md section 10 list them.

``EventStream`` reads them from a connection of its own, one message per ``__anext__``: no
background task. Pubsub keeps nothing for a subscriber that is away, so events published
while the connection is down are lost. After a dropped connection the stream resubscribes
and then yields an ``Event`` of kind ``'reconnected'`` where the gap was, so a consumer can
re-read whatever state it follows (``wait_for`` does).

On a Cluster the stream listens on the primary of the deployment's slot, found again
at each reconnection, so it follows a failover. A
shard of a sharded deployment publishes with SPUBLISH (aqless.scripts' events.lua): its
stream then subscribes with SSUBSCRIBE (``sharded=True``); a server that unsubscribes it
(the slot moved) counts as a dropped connection.
"""

from __future__ import annotations

import json
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from types import TracebackType
from typing import Final, Literal, Protocol, Self, runtime_checkable

import anyio
from redis import exceptions as redis_errors
from redis.asyncio.client import PubSub

from aqless._concurrency.backoff import Delays
from aqless._connection.protocol import error_for, server_condition
from aqless.errors import ConfigurationError, ConnectionLostError

__all__ = [
    "RECONNECTED",
    "TRACKED_CHANNELS",
    "Event",
    "EventStream",
    "FinalState",
    "PubSubSource",
    "parse_event",
    "wait_for",
]

logger = logging.getLogger(__name__)

TRACKED_CHANNELS: Final = (
    "put",
    "popped",
    "completed",
    "failed",
    "canceled",
    "stalled",
    "track",
    "untrack",
)
"""The channels that publish a tracked job's jid; the kind of their events is the name."""
#: aqless's own channel of job progress reports (JSON, kind ``'progress'``; see aqless.progress).
PROGRESS_CHANNEL: Final = "progress"
RECONNECTED: Final = "reconnected"
"""The kind of the event that marks a resubscription: events may have been lost before it."""

_JSON_FIELDS: Final = ("queue", "to", "worker", "group", "message", "option", "value", "dedup")


@dataclass(frozen=True, slots=True)
class Event:
    """One publication of the script.

    Attributes:
        kind: the channel's name for the bare-jid channels (``'put'``, ``'popped'``,
            ``'completed'``...); the payload's ``event`` for ``ql:log`` and ``ql:w:<worker>``
            (``'put'``, ``'completed'``, ``'advanced'``, ``'failed'``, ``'canceled'``,
            ``'lock_lost'``, ``'config_set'``, ``'config_unset'``; aqless's ``'deduplicated'``
            and ``'debounced'``, see aqless.puts), and ``'progress'`` for aqless's
            ``ql:progress`` (with `fraction`, `message`); ``'unknown'`` for a
            payload that does not parse; ``'reconnected'`` after a resubscription.
        jid: the job, if the event names one.
        channel: the full channel name (``'ql:log'``, ``'ql:w:worker-1'``...); ``''`` for
            ``'reconnected'``.
        raw: the payload as published.
        queue, to, worker, group, message, option, value: the payload's fields of that name
            (``to``: the next queue of ``'advanced'``); None when absent or ``false``.
        dedup: the dedup id of a ``'deduplicated'`` or ``'debounced'`` put.
        fraction: how far the job got, from 0 to 1 (``'progress'`` only).

    Examples:
        ```python
        async with client.events("completed", "failed") as events:
            async for event in events:
                print(event.kind, event.jid)
        ```
    """

    kind: str
    jid: str | None
    channel: str
    raw: str
    queue: str | None = None
    to: str | None = None
    worker: str | None = None
    group: str | None = None
    message: str | None = None
    option: str | None = None
    value: str | None = None
    dedup: str | None = None
    fraction: float | None = None


def parse_event(channel: str, payload: str, *, prefix: str = "ql:") -> Event:
    """The ``Event`` of one publication; never raises (kind ``'unknown'`` instead).

    Examples:
        ```python
        event = parse_event("ql:completed", "4f1c...")
        assert event.kind == "completed" and event.jid == "4f1c..."
        ```
    """
    name = channel[len(prefix) :] if channel.startswith(prefix) else ""
    if name in TRACKED_CHANNELS:
        return Event(kind=name, jid=payload, channel=channel, raw=payload)
    if name in ("log", PROGRESS_CHANNEL) or name.startswith("w:"):
        fields = _json_object(payload)
        kind = None if fields is None else fields.get("event")
        if fields is not None and isinstance(kind, str):
            texts = {key: _text(fields.get(key)) for key in _JSON_FIELDS}
            jid = _text(fields.get("jid"))
            fraction = _fraction(fields.get("fraction"))
            return Event(kind, jid, channel, payload, **texts, fraction=fraction)
    return Event(kind="unknown", jid=None, channel=channel, raw=payload)


def _json_object(payload: str) -> dict[str, object] | None:
    try:
        value: object = json.loads(payload)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None
    return {str(key): item for key, item in value.items()}


def _text(value: object) -> str | None:
    # the script writes every field as a JSON string, or `false` when there is none
    return value if isinstance(value, str) else None


def _fraction(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _decoded(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


class PubSubSource(Protocol):
    """What an EventStream subscribes through: a ``redis.asyncio.Redis`` (its connection pool
    lends the connection), or anything else that makes a ``PubSub`` (a Cluster client's
    events come from one of its nodes).

    Examples:
        ```python
        stream = EventStream(redis.asyncio.Redis.from_url(url), channels=["completed"])
        ```
    """

    def pubsub(self) -> PubSub:
        """A new ``PubSub`` on a connection of its own.

        Examples:
            ```python
            pubsub = source.pubsub()
            ```
        """
        ...


@runtime_checkable
class Relocating(Protocol):
    """A PubSubSource whose server may change (a Cluster's node holding a slot): asked to
    look again before each subscription."""

    async def relocate(self) -> None: ...


_State = Literal["unopened", "open", "closed"]
# Errors that mean the connection is gone. Refused credentials are not retried: they will
# not get better by waiting.
_DROPPED: Final = (redis_errors.ConnectionError, redis_errors.TimeoutError, OSError)
_REFUSED: Final = (redis_errors.AuthenticationError, redis_errors.AuthorizationError)
# Replies that say a sharded subscription is on the wrong node: look for the slot again.
_ELSEWHERE: Final = (
    redis_errors.MovedError,
    redis_errors.AskError,
    redis_errors.TryAgainError,
    redis_errors.ClusterDownError,
)


class EventStream:
    """Events from a pubsub connection of its own, as an async iterator.

    ``async with EventStream(redis) as events: async for event in events: ...`` is the
    intended use: the channels are subscribed (and the server has confirmed it) when
    ``__aenter__`` returns, so no event published after that is missed, and leaving the
    block unsubscribes and closes the connection, also when the task is cancelled. A plain
    ``async for`` subscribes on the first ``__anext__``; then call ``aclose()`` (or use
    ``contextlib.aclosing``), since breaking out of the loop does not.

    A dropped connection (a server restart, ``CLIENT KILL``, a network failure, or no answer
    to a ``PING`` sent after ``ping_interval`` of silence) is reopened with exponential
    backoff capped at ``max_backoff``, for as long as it takes, and resubscribed; the next
    event is then of kind ``'reconnected'``. Events published meanwhile are lost. The first
    subscription is not retried: an unreachable server fails ``__aenter__`` with
    ConnectionLostError. A subscription the server refuses (its ACL), the first or a
    resubscription, raises its typed refusal (PermissionDeniedError).

    One task reads at a time. ``aclose()`` from another task ends that task's iteration.

    Args:
        redis: the client whose connection pool provides the connection (any PubSubSource).
        prefix: the key prefix of the deployment, ending in ``':'``.
        channels: channel names without the prefix (``'log'``, ``'completed'``...); empty
            means every tracked-job channel, ``'log'`` and ``'progress'``.
        workers: worker names whose ``ql:w:<worker>`` channel to subscribe to as well.
        ping_interval: seconds of silence after which the connection is checked.
        max_backoff: the longest wait, in seconds, between two reconnection attempts.
        close_timeout: seconds granted to each step of the cleanup.
        sharded: subscribe with SSUBSCRIBE (and hear SPUBLISH), as a shard of a sharded
            deployment publishes.

    Raises:
        ConfigurationError: (a ValueError) an unknown channel name, an empty worker name,
            or a prefix not ending in ``':'``.
        ConnectionLostError: the first subscription cannot reach the server.
        PermissionDeniedError: the server's ACL refuses a subscription.
        RuntimeError: a second task reads the stream, or it is opened twice.

    Examples:
        ```python
        async with client.events("completed", workers=[worker.name]) as events:
            async for event in events:
                if event.kind == "reconnected":
                    ...  # events may have been lost: read the state again
                elif event.kind == "completed":
                    print("done:", event.jid)
        ```
    """

    def __init__(
        self,
        redis: PubSubSource,
        *,
        prefix: str = "ql:",
        channels: Sequence[str] = (),
        workers: Sequence[str] = (),
        ping_interval: float = 30.0,
        max_backoff: float = 5.0,
        close_timeout: float = 5.0,
        sharded: bool = False,
    ) -> None:
        self._managed = False  # inside `async with`: its exit closes the stream
        if not prefix.endswith(":"):
            raise ConfigurationError(f"a key prefix must end with ':', got {prefix!r}")
        known = (*TRACKED_CHANNELS, "log", PROGRESS_CHANNEL)
        for name in channels:
            if name not in known and not (name.startswith("w:") and len(name) > 2):
                raise ConfigurationError(f"unknown event channel {name!r}; expected one of {known}")
        if any(not worker for worker in workers):
            raise ConfigurationError("a worker name must not be empty")
        names = [*(channels or known), *(f"w:{worker}" for worker in workers)]
        self._redis = redis
        self._prefix = prefix
        self._channels = tuple(dict.fromkeys(prefix + name for name in names))
        self._ping_interval = ping_interval
        self._delays = Delays(0.05, max_backoff)
        self._close_timeout = close_timeout
        self._sharded = sharded
        self._state: _State = "unopened"
        self._pubsub: PubSub | None = None
        self._ready: deque[Event] = deque()
        self._unconfirmed: set[str] = set()
        self._gap = False  # resubscribed: announce it once every channel is confirmed
        self._pinged = False
        self._failures = 0
        self._reader: anyio.CancelScope | None = None  # the task reading, for aclose()
        self._reader_done: anyio.Event | None = None

    @property
    def channels(self) -> tuple[str, ...]:
        """The full names of the subscribed channels."""
        return self._channels

    async def __aenter__(self) -> Self:
        self._managed = True
        await self._open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Event:
        if self._state == "unopened":
            await self._open()
        if self._ready:
            return self._ready.popleft()
        if self._state == "closed":
            raise StopAsyncIteration
        if self._reader is not None:
            raise RuntimeError("another task is already reading this EventStream")
        self._reader_done = done = anyio.Event()
        cancelled = False
        with anyio.CancelScope() as self._reader:
            try:
                while True:
                    event = await self._read()
                    if event is not None:
                        return event
            except anyio.get_cancelled_exc_class():
                cancelled = True
                raise
            finally:
                self._reader = None
                done.set()
                if cancelled and not self._managed and self._state == "open":
                    # a bare `async for` whose task is cancelled: nobody else will close
                    with anyio.CancelScope(shield=True):
                        await self.aclose()
        raise StopAsyncIteration  # aclose() from another task cancelled the read

    async def aclose(self) -> None:
        """Unsubscribe and close the connection; idempotent. Shielded and bounded in time
        (``close_timeout`` seconds a step); a task reading the stream ends its iteration.

        Examples:
            ```python
            events = client.events()
            try:
                async for event in events:
                    ...
            finally:
                await events.aclose()
            ```
        """
        self._state = "closed"
        self._ready.clear()
        if self._reader is not None and self._reader_done is not None:
            self._reader.cancel()  # another task is reading: stop it before closing
            with anyio.move_on_after(self._close_timeout, shield=True):
                await self._reader_done.wait()
        pubsub, self._pubsub = self._pubsub, None
        if pubsub is not None:
            await self._release(pubsub, unsubscribe=True)

    # ---- connection ----------------------------------------------------------------------

    async def _open(self) -> None:
        if self._state != "unopened":
            raise RuntimeError(f"this EventStream is {self._state}: it can be opened once")
        self._state = "open"
        try:
            pubsub = await self._subscribe()
            while self._unconfirmed:  # the server has subscribed us once it confirms
                message = await self._next_message(pubsub)
                event = None if message is None else self._handle(message)
                if event is not None:
                    self._ready.append(event)
        except _DROPPED as error:
            await self.aclose()
            raise ConnectionLostError(f"cannot subscribe to events: {error}") from error
        except redis_errors.ResponseError as error:  # e.g. the ACL allows no such channel
            # nothing to unsubscribe from: close at once rather than wait for confirmations
            self._state = "closed"
            refused, self._pubsub = self._pubsub, None
            if refused is not None:
                await self._release(refused, unsubscribe=False)
            raise _refusal(error) from error
        except BaseException:
            await self.aclose()
            raise

    async def _subscribe(self) -> PubSub:
        if isinstance(self._redis, Relocating):  # a Cluster's node: the slot may have moved
            await self._redis.relocate()
        pubsub = self._redis.pubsub()
        try:
            if self._sharded:
                await pubsub.ssubscribe(*self._channels)
            else:
                await pubsub.subscribe(*self._channels)
        except BaseException:
            await self._release(pubsub, unsubscribe=False)
            raise
        self._pubsub = pubsub
        self._pinged = False
        self._unconfirmed = set(self._channels)
        return pubsub

    async def _read(self) -> Event | None:
        """One message, or None for a message that is not an event (or a reconnection)."""
        pubsub = self._pubsub
        if pubsub is None:  # a cancellation interrupted the reconnection: resume it
            await self._reconnect(None)
            return None
        try:
            message = await self._next_message(pubsub)
        except _REFUSED:
            raise
        except _DROPPED as error:
            await self._reconnect(error)
            return None
        except redis_errors.ResponseError as error:  # e.g. a resubscription the ACL refuses
            raise _refusal(error) from error
        return None if message is None else self._handle(message)

    async def _next_message(self, pubsub: PubSub) -> dict[str, object] | None:
        """A message, or None after ``ping_interval`` of silence, when a PING goes out; a
        second silence means the connection is dead."""
        try:
            message: dict[str, object] | None = await pubsub.get_message(
                timeout=self._ping_interval
            )
        except _ELSEWHERE as error:  # a sharded subscription on a node without the slot
            raise redis_errors.ConnectionError(
                f"the channels' slot is elsewhere: {error}"
            ) from error
        if message is not None:
            if message.get("type") == "sunsubscribe":  # the server's own: the slot moved
                raise redis_errors.ConnectionError("the server dropped the shard channels")
            self._pinged = False
            return message
        if self._pinged:
            raise redis_errors.TimeoutError("no answer to PING on the pubsub connection")
        await pubsub.ping()  # the answer arrives as a message
        self._pinged = True
        return None

    async def _reconnect(self, error: BaseException | None) -> None:
        pubsub, self._pubsub = self._pubsub, None
        if pubsub is not None:
            await self._release(pubsub, unsubscribe=False)
        while True:
            self._failures += 1
            delay = self._delays.after(self._failures)
            # one warning per outage: the attempts that follow (many, while a server is down)
            # at debug level, and the resubscription at info
            logger.log(
                logging.WARNING if self._failures == 1 else logging.DEBUG,
                "event stream lost its connection (%s); reconnecting in %.2f s",
                error or "interrupted",
                delay,
            )
            await anyio.sleep(delay)
            try:
                await self._subscribe()
            except _REFUSED:
                raise
            except _DROPPED as again:
                error = again
            else:
                self._gap = True  # the 'reconnected' event follows the confirmations
                return

    async def _release(self, pubsub: PubSub, *, unsubscribe: bool) -> None:
        # Two bounded steps, so that a hung UNSUBSCRIBE still leaves time to close.
        if unsubscribe:
            with anyio.move_on_after(self._close_timeout, shield=True), suppress(*_DROPPED):
                await (pubsub.sunsubscribe() if self._sharded else pubsub.unsubscribe())
                # read the confirmations: once they are in, the server holds no subscription
                while pubsub.subscribed:
                    if await pubsub.get_message(timeout=self._close_timeout) is None:
                        break
        with (
            anyio.move_on_after(self._close_timeout, shield=True),
            suppress(redis_errors.RedisError, OSError),
        ):
            await pubsub.aclose()  # type: ignore[no-untyped-call, unused-ignore]  # untyped in redis-py

    def _handle(self, message: dict[str, object]) -> Event | None:
        kind = message.get("type")
        if kind in ("message", "smessage"):
            channel = _decoded(message.get("channel"))
            return parse_event(channel, _decoded(message.get("data")), prefix=self._prefix)
        if kind not in ("subscribe", "ssubscribe"):
            return None  # pong
        if not self._unconfirmed:
            # a confirmation we did not ask for: redis-py reconnected on its own (its retry
            # policy) and resubscribed; events published before are lost as well
            self._unconfirmed = set(self._channels)
            self._gap = True
        self._unconfirmed.discard(_decoded(message.get("channel")))
        if self._unconfirmed or not self._gap:
            return None
        self._gap = False
        logger.info(
            "event stream resubscribed to %d channels (after %d attempts)",
            len(self._channels),
            max(self._failures, 1),
        )
        self._failures = 0
        return Event(kind=RECONNECTED, jid=None, channel="", raw="")


FinalState = Literal["complete", "failed"]
"""How a job `wait_for` waited on ended: ``'complete'`` or ``'failed'``."""
# what wait_for returns for a job in such a state (None: the job does not exist)...
_FINAL_STATES: Final[dict[str | None, FinalState | None]] = {
    "complete": "complete",
    "failed": "failed",
    None: None,
}
# ...and after such an event
_FINAL_EVENTS: Final[dict[str, FinalState | None]] = {
    "completed": "complete",
    "failed": "failed",
    "canceled": None,
}


# the longest wait between two readings of the state by wait_for
_MAX_POLL_INTERVAL: Final = 1.0


def _refusal(error: redis_errors.ResponseError) -> Exception:
    """A refused subscription as aqless's error: the server's condition (``BUSY`` with a
    script running) as ServerUnavailableError, anything else (an ACL) as the script's."""
    return server_condition("subscribe", error) or error_for("subscribe", str(error))


async def wait_for(
    redis: PubSubSource,
    jid: str,
    *,
    current_state: Callable[[], Awaitable[str | None]],
    prefix: str = "ql:",
    timeout: float | None = None,
    sharded: bool = False,
) -> FinalState | None:
    """Wait until a job is complete, failed, canceled or gone, driven by events.

    Subscribes to ``ql:log`` and ``ql:failed`` first, then reads the job's state once (so a
    job finishing in between is not missed), then waits for its ``completed`` (an
    ``advanced`` job is not finished), ``failed`` or ``canceled`` event. The state is read
    again after a reconnection, since events may have been lost.

    One way to fail has no event: ``retry`` with the retries spent publishes nothing on
    ``ql:log``, and on ``ql:failed`` only for a tracked job and only in the classic
    vocabulary (CORE 6.7, REQLESS 10). So the state is also read while no event ends the
    wait: 0.05 s after the first reading, then twice as long each time up to
    a second.

    Args:
        redis: the client whose connection pool provides the pubsub connection (any
            PubSubSource).
        jid: the job.
        current_state: reads the job's state now (``'running'``, ``'complete'``...), None
            if the job does not exist.
        prefix: the key prefix of the deployment.
        timeout: seconds to wait at most; None waits for ever.
        sharded: listen with SSUBSCRIBE (see EventStream).

    Returns:
        ``'complete'`` or ``'failed'``; None for a canceled job or one that does not exist.

    Raises:
        TimeoutError: the job did not finish within ``timeout``.
        ConnectionLostError: the first subscription cannot reach the server.

    Examples:
        ```python
        state = await client.wait(jid, timeout=30)  # the usual way in: Client.wait
        ```
    """
    with anyio.fail_after(timeout):
        listening = EventStream(redis, prefix=prefix, channels=("log", "failed"), sharded=sharded)
        async with listening as events:
            state = await current_state()
            if state in _FINAL_STATES:
                return _FINAL_STATES[state]
            final: list[FinalState | None] = []
            async with anyio.create_task_group() as tasks:

                async def settle(watch: Awaitable[FinalState | None]) -> None:
                    final.append(await watch)
                    tasks.cancel_scope.cancel()

                tasks.start_soon(settle, _final_event(events, jid, current_state))
                tasks.start_soon(settle, _final_state(current_state))
            return final[0]


async def _final_event(
    events: EventStream, jid: str, current_state: Callable[[], Awaitable[str | None]]
) -> FinalState | None:
    async for event in events:
        if event.kind == RECONNECTED:  # events may have been lost: look again
            state = await current_state()
            if state in _FINAL_STATES:
                return _FINAL_STATES[state]
        elif event.jid == jid and event.kind in _FINAL_EVENTS:
            return _FINAL_EVENTS[event.kind]
    raise RuntimeError("the event stream ended")  # only aclose() ends it, and nobody calls it


async def _final_state(current_state: Callable[[], Awaitable[str | None]]) -> FinalState | None:
    interval = 0.05
    while True:
        await anyio.sleep(interval)
        state = await current_state()
        if state in _FINAL_STATES:
            return _FINAL_STATES[state]
        interval = min(interval * 2, _MAX_POLL_INTERVAL)
