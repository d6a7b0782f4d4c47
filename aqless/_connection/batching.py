"""Automatic pipelining: calls made while a round trip is in flight go together in the next.

A worker makes many small calls at once (completes, heartbeats, pops, its jobs' own verbs).
Sending each alone costs a round trip and a connection apiece; a ``Batcher`` keeps one
pipeline in flight instead, so at 200 concurrent jobs a round trip carries the calls of all
the jobs that finished meanwhile. A lone call goes at once, as a plain call.

An *ordered* call (``submit_ordered``) goes last in its batch, and its arguments are made
when that batch is sent, from the calls that go ahead of it there (calls of other batches
in flight may run before or after it). A call that reports a running job's outcome says
which jid it `releases`; an ordered call is made from the jids released by the calls ahead
of it. The worker pops this way (see aqless._worker.pops).

With a ``Pairing``, an ordered call and the calls ahead of it that release a jid go as one
call when the pairing can join them (the worker's outcomes and its next pop: see
aqless._connection.pop_after); each caller gets its own part of the joined reply.

A Batcher is built with a `BatchingPolicy`; its owner asks the connection layer for one
(aqless._connection.protocol: plain, or a worker's). With ``hold_behind_ordered`` (a worker
that prefetches), a call submitted while an ordered
call is in flight waits for the next ordered call instead of flying at once: a job that
ends while its worker's pop is on its way reports with the pop that follows, as one call,
rather than in a round trip of its own. The held calls go at the latest one turn of the
event loop after the ordered call lands, whether or not another follows.

With ``in_order`` (set where every batch goes on one connection, in the order sent: the lean
connection, aqless._connection.lean), an ordered call is made from the jids released by the
batches still in flight too, not only by the calls of its own batch: the server runs those
first. A worker with two pops on their way (see aqless.worker) counts the outcomes ahead of
its second pop that way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Protocol

import anyio
from anyio.abc import TaskStatus

from aqless._concurrency.wakeup import Wakeup
from aqless._connection.lean import uncancelled
from aqless.errors import ConnectionLostError
from aqless.scripts.loader import Call, Reply

__all__ = ["Batcher", "BatchingPolicy"]

Send = Callable[[Sequence[Call]], Awaitable[list[Reply]]]
#: Makes an ordered call's command and arguments when its batch is sent, from the jids that
#: the calls going ahead of it in that batch release (see ``Batcher.submit``).
MakeCall = Callable[[Sequence[str]], Call]


_UNMADE: Call = ("", ())


class Pairing(Protocol):
    """Joins calls and the ordered call behind them into one, and splits the joined reply."""

    def joins(self, first: Call) -> bool:
        """Whether `first` may be joined with an ordered call."""

    def join_many(self, firsts: Sequence[Call], ordered: Call | None) -> Call | None:
        """The one call doing them all (each `joins`) and then the ordered one, if any, or
        None if they cannot be joined."""

    def split_many(self, reply: Reply, count: int) -> list[Reply]:
        """The replies of the `count` first calls and then of the ordered one (anything,
        without one), from the joined call's."""


@dataclass(frozen=True, slots=True)
class BatchingPolicy:
    """How a Batcher groups the calls it is given (see the module's documentation).

    Attributes:
        hold_behind_ordered: calls submitted while an ordered call is in flight wait for
            the next ordered call (a worker whose pops run ahead).
        in_order: the batches in flight run before any batch sent after them (they go on
            one connection): the jids they release count for the ordered calls made.
        on_landed: told the jids released by the calls of each batch that landed
            (`in_order` only): the server ran their outcomes, though their callers have not
            woken yet.
    """

    hold_behind_ordered: bool = False
    in_order: bool = False
    on_landed: Callable[[Sequence[str]], None] | None = None


#: Calls made concurrently share round trips; nothing waits for an ordered call.
PLAIN = BatchingPolicy()


class _Pending:
    __slots__ = ("call", "done", "error", "make", "parts", "releases", "reply")

    def __init__(
        self, call: Call, make: MakeCall | None = None, releases: str | None = None
    ) -> None:
        self.call = call
        self.make = make
        self.releases = releases
        self.done = asyncio.Event()  # see aqless._concurrency.wakeup for why not anyio's
        self.reply: Reply = None
        self.error: BaseException | None = None
        #: a joined call's calls, the ordered one last (see Pairing)
        self.parts: tuple[_Pending, ...] | None = None

    def land(self, reply: Reply, pairing: Pairing | None) -> None:
        if self.parts is None or pairing is None:
            self.reply = reply
            self.done.set()
            return
        popped = self.parts[-1].make is not None  # the ordered call: the pop
        replies = pairing.split_many(reply, len(self.parts) - popped)
        for part, part_reply in zip(self.parts, replies[: len(self.parts)], strict=True):
            part.land(part_reply, None)

    def fail(self, error: BaseException) -> None:
        for part in self.parts or (self,):
            part.error = error
            part.done.set()


class Batcher:
    """Sends submitted calls through `send`, a batch per round trip, from one task
    (``run``) owned by whoever started it. Up to `depth` batches are in flight at once (on
    as many connections), so the client prepares one while the server runs another."""

    def __init__(
        self,
        send: Send,
        *,
        depth: int = 2,
        pairing: Pairing | None = None,
        policy: BatchingPolicy = PLAIN,
    ) -> None:
        self._send = send
        self.policy = policy
        self._pairing = pairing
        self._queue: list[_Pending] = []
        self._changed = Wakeup()  # calls arrived, or a batch landed
        self._closed = False
        self._in_flight = 0
        self._ordered = 0  # ordered calls waiting in the queue
        self._gathering = False  # see gathering()
        self._ordered_in_flight = 0
        self._releasing: dict[int, list[str]] = {}  # in flight: jids released, by batch
        # the policy's, read on every call
        self._hold_behind_ordered = policy.hold_behind_ordered
        self._in_order = policy.in_order
        self._on_landed = policy.on_landed if policy.in_order else None
        self.depth = depth
        self.round_trips = 0
        self.calls = 0

    @contextmanager
    def gathering(self) -> Iterator[None]:
        """While inside, a lone call is sent by the batcher's task, with whatever else is
        submitted meanwhile, rather than at once: for a caller about to submit an ordered
        call (a worker waiting for a slot, whose next pop should share the round trip of
        the outcome that frees it)."""
        self._gathering = True
        try:
            yield
        finally:
            self._gathering = False

    async def submit(self, call: Call, releases: str | None = None) -> Reply:
        """The call's reply (a refusal is returned as the server's error, not raised); the
        exception of a failed round trip is raised. A caller cancelled while waiting does
        not take its call back: it may already be on its way. `releases`: the jid of the
        running job whose outcome the call reports (the ordered calls behind it see it)."""
        if self._closed:
            raise RuntimeError("this batcher is closed")
        if not self._queue and self._in_flight == 0 and not self._gathering:
            return await self._alone(call, releases=releases)
        return await self._wait(_Pending(call, None, releases))

    async def submit_ordered(self, make: MakeCall) -> Reply:
        """Like ``submit``, for a call made when its batch is sent: ``make(released)`` gives
        its command and arguments, `released` being the jids that the calls going before
        it in its batch release (the server runs them first). A lone call is made at once,
        with nothing ahead; with nothing in flight, the calls held for it go with it from
        the caller's own task (the hops to the batcher's task cost a worker with one slot
        about a tenth of its time per job)."""
        if self._closed:
            raise RuntimeError("this batcher is closed")
        if not self._queue and self._in_flight == 0:
            return await self._alone(make(()), ordered=True)
        self._ordered += 1
        pending = _Pending(_UNMADE, make)
        # only held calls wait (or, `in_order`, the batches in flight run first anyway): fly
        # them from here
        if self._in_flight == 0 or (self._in_order and self._in_flight < self.depth):
            self._queue.append(pending)
            return await self._fly_here(pending)
        return await self._wait(pending)

    async def _fly_here(self, pending: _Pending) -> Reply:
        batch = self._take_batch()
        self._in_flight += 1
        self.round_trips += 1
        self.calls += len(batch)
        await self._fly(batch, ordered=True)
        if pending.error is not None:
            raise pending.error
        return pending.reply

    async def _wait(self, pending: _Pending) -> Reply:
        self._queue.append(pending)
        if self._gathering and self._in_flight == 0:
            # the holder's ordered call, due in the next turn, is to fly this one from its
            # own task: the sending task is woken only if it did not (a wake per job
            # costs a worker with one slot a few percent of its time)
            asyncio.get_running_loop().call_soon(self._send_held)
        elif self._hold_behind_ordered and self._ordered_in_flight and pending.make is None:
            pass  # it goes with the next ordered call, or once the one in flight lands
        else:
            self._changed.fire()
        await pending.done.wait()
        if pending.error is not None:
            raise pending.error
        return pending.reply

    async def _alone(
        self, call: Call, *, ordered: bool = False, releases: str | None = None
    ) -> Reply:
        """Nothing else waits to be sent: send the call from the caller's own task, saving
        the hop to the batcher's (calls arriving meanwhile go in the next batch)."""
        self._in_flight += 1
        self.round_trips += 1
        self.calls += 1
        if ordered:
            self._ordered_in_flight += 1
        key = self._flying([] if releases is None else [releases])
        landed: list[str] = []
        try:
            (reply,) = await self._send([call])
            if releases is not None:
                landed.append(releases)
            return reply
        finally:
            self._land_releases(key, landed)
            self._in_flight -= 1
            self._landed(ordered=ordered)

    def _flying(self, released: list[str]) -> int:
        """Note the jids a batch about to be sent releases, until it lands (a key)."""
        key = id(released)
        if self._in_order and released:
            self._releasing[key] = released
        return key

    def _released_in_flight(self) -> list[str]:
        """The jids released by the batches in flight, when they run first (`in_order`)."""
        if not self._releasing:
            return []
        return [jid for released in self._releasing.values() for jid in released]

    def _wake_sender(self) -> None:
        """Wake the sending task (``run``) if it has something to do: calls queued, or the
        batcher closed (a landed batch makes room for the queued calls)."""
        if self._queue or self._closed:
            self._changed.fire()

    def close(self) -> None:
        """Let ``run`` return once what was submitted has been sent."""
        self._closed = True
        self._changed.fire()

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        try:
            await self._send_all()
        finally:  # cancelled: nobody will send what is left, so nobody may wait for it
            self._closed = True
            for pending in self._queue:
                pending.error = ConnectionLostError("the batcher stopped before sending this")
                pending.done.set()
            self._queue = []
            self._ordered = 0

    async def _send_all(self) -> None:
        async with anyio.create_task_group() as flights:
            while True:
                changed = self._changed.event
                if not self._queue:
                    if self._closed:
                        return  # the task group waits for the batches in flight
                    await changed.wait()
                    continue
                if self._in_flight >= self.depth or self._holding_behind_ordered():
                    await changed.wait()  # a batch lands, or more calls arrive
                    continue
                batch = self._take_batch()
                if not batch:
                    continue
                self.round_trips += 1
                self.calls += len(batch)
                self._in_flight += 1
                ordered = any(p.make is not None or p.parts is not None for p in batch)
                flights.start_soon(partial(self._fly, batch, ordered=ordered))

    def _take_batch(self) -> list[_Pending]:
        """The queued calls, ordered ones last and made now (after every other call)."""
        batch, self._queue = self._queue, []
        if not self._ordered:
            if self._pairing is not None and len(batch) > 1:
                self._join(batch, self._pairing, ordered=False)
            return batch
        self._ordered = 0
        batch.sort(key=lambda pending: pending.make is not None)  # stable
        made: list[_Pending] = []
        in_flight = self._released_in_flight()
        for pending in batch:
            if pending.make is not None:
                try:
                    released = _releasing(made)
                    pending.call = pending.make(in_flight + released)
                except Exception as error:  # its caller's bug, not the batch's
                    pending.error = error
                    pending.done.set()
                    continue
            made.append(pending)
            if pending.make is not None and self._pairing is not None:
                self._join(made, self._pairing)
        return made

    @staticmethod
    def _join(made: list[_Pending], pairing: Pairing, *, ordered: bool = True) -> None:
        """Join the ordered call last in `made` (`ordered`; else none: two calls at least)
        with the calls ahead of it that release a jid, those the pairing can join, in their
        order (the calls of a batch come from different callers, so moving them behind the
        others changes no caller's order)."""
        last = made[-1] if ordered else None
        firsts = [
            pending
            for pending in (made[:-1] if ordered else made)
            if pending.releases is not None
            and pending.parts is None
            and pairing.joins(pending.call)
        ]
        if len(firsts) < (1 if ordered else 2):
            return
        call = pairing.join_many(
            [first.call for first in firsts], None if last is None else last.call
        )
        if call is None:
            return
        joined = _Pending(call)
        joined.parts = tuple(firsts) if last is None else (*firsts, last)
        chosen = {id(first) for first in firsts}
        made[:] = [p for p in made if id(p) not in chosen and p is not last]
        made.append(joined)

    async def _fly(self, batch: list[_Pending], *, ordered: bool = False) -> None:
        if ordered:
            self._ordered_in_flight += 1
        key = self._flying(_releasing(batch))
        try:
            replies = await self._send([pending.call for pending in batch])
        except BaseException as error:  # the round trip failed: every call of it did
            for pending in batch:
                pending.fail(
                    error
                    if isinstance(error, Exception)
                    else ConnectionLostError("the call was interrupted")
                )
            # a CancelledError nobody sent this task (a shared future it awaited was
            # stopped) is one more failed round trip: the batcher lives on
            if not isinstance(error, Exception) and not (
                isinstance(error, asyncio.CancelledError) and uncancelled()
            ):
                raise
        else:
            for pending, reply in zip(batch, replies, strict=True):
                pending.land(reply, self._pairing)
        finally:
            if self._on_landed is not None:
                self._land_releases(key, _releasing(batch, landed=True))
            else:
                self._releasing.pop(key, None)
            self._in_flight -= 1
            self._landed(ordered=ordered)

    def _land_releases(self, key: int, released: list[str]) -> None:
        """The batch `key` is no longer in flight; tell of the outcomes in it that reached
        the server (`released`: a call whose round trip failed may not have)."""
        self._releasing.pop(key, None)
        if released and self._on_landed is not None:
            self._on_landed(released)

    def _landed(self, *, ordered: bool) -> None:
        if not ordered:
            self._wake_sender()
            return
        self._ordered_in_flight -= 1
        if self._hold_behind_ordered:
            # the calls held behind it go with the next ordered call, if its caller makes
            # one at once (from its own task); else the sending task takes them
            asyncio.get_running_loop().call_soon(self._send_held)
        else:
            self._wake_sender()

    def _holding_behind_ordered(self) -> bool:
        """Whether the queued calls wait for the next ordered call, or for the one in flight
        to land (however long ago the sending task was woken)."""
        return self._hold_behind_ordered and bool(self._ordered_in_flight) and not self._ordered

    def _send_held(self) -> None:
        """Wake the sending task for the calls held for an ordered call, unless one took off
        meanwhile (with them) and `hold_behind_ordered`: the calls queued since wait for the
        next (or for it to land)."""
        if not (self._hold_behind_ordered and self._ordered_in_flight):
            self._wake_sender()


def _releasing(batch: Sequence[_Pending], *, landed: bool = False) -> list[str]:
    """The jids released by the calls of a batch (a joined call's parts'); `landed`: only
    by those that got their replies."""
    return [
        part.releases
        for pending in batch
        for part in (pending.parts or (pending,))
        if part.releases is not None and not (landed and part.error is not None)
    ]
