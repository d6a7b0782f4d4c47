"""How a worker picks up new work: while it has free slots and found its queues empty, it
listens on ``ql:log`` and is told the moment a job is put (or advanced) into a queue it
serves, by any qless client. A worker with full slots stops listening, so a busy worker
reads no events.

The worker also offers to take its queues' next jobs (``worker.offer``, see worker.lua) and
listens on its push channel, on every kind of deployment (a Subscriber through the client's
Endpoint, aqless._connection.endpoint): a put made through aqless's scripts then pops the
job for it and publishes it there, so the job arrives with the news instead of a pop's round
trip later. An offering worker needs no put events for that, so only a few of them (the
*put listeners*, ``_PUT_LISTENERS``; the docs called them "ears" before) listen to
``ql:log`` too: a put into the queues of 500 idle workers costs the server a push and a few
deliveries, not two messages per worker, and the workers do not all read them. The put
listeners are there for the work that comes without a push: a put made by another qless
client's script, an advanced job, a put no sampled offer could take. Each offer's reply
counts the put listeners (``ql:pushed``'s subscribers); a worker without an offer (its
queues not yet known) or whose offer finds too few becomes one, and a put listener that
finds too many stops listening to put events at random, so a fleet that started at once
settles near ``_PUT_LISTENERS``. While there are none (each put listener filled its slots),
such work waits for a worker's next offer renewal or poll, within ``interval``.

The put event of a pushed job brings nothing to pop, whichever worker it was pushed to: the
script tells the put listeners on ``ql:pushed`` before it publishes the put event (so they
do not pop for each put, and no worker waits to learn whether a push follows); a put event
without a push (no offer fitted, another qless client's script made it, or the put took the
job from another worker: then the protocol's put event comes first) triggers a pop.

A worker sharing a slot budget (a ShardedWorker's, aqless._worker.budget) offers only the
slots the budget gives it (`Member.ceiling_to_offer`), none when it has none (it hears put
events then), and gives its offered, unheld slots back when another member lacks one: it
withdraws the offer, PINGs its push connection and only then lets the budget count them
free (a push made before the withdrawal was written to the connection before the PONG).
"""

from __future__ import annotations

import json
import logging
import random
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import partial
from typing import Protocol

import anyio
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from aqless._concurrency.backoff import SUBSCRIBE, apart
from aqless._connection.subscriber import Message, Subscriber
from aqless._worker.budget import Ceiling, Member
from aqless._worker.outage import ServerOutage
from aqless._worker.popping import Unreadable, readable_jobs
from aqless._worker.served import ServedQueues
from aqless.client import Client
from aqless.errors import ConnectionLostError, ScriptError
from aqless.events import RECONNECTED, parse_event
from aqless.job import Job

logger = logging.getLogger(__name__)

# jids pushed whose put event has not come yet (it follows at once, but not when a put took
# the job from another worker: the put event came first then, and the jid is never claimed)
_PUSHED_REMEMBERED = 1024
# offering workers that listen to put events as well, the put listeners (see the module's
# docstring)
_PUT_LISTENERS = 2
# _offer's answer when a recent offer stands (how many put listeners there are is not asked)
_NOT_ASKED = -1


class PushTaker(Protocol):
    """The worker, as the push channel sees it."""

    @property
    def name(self) -> str: ...

    @property
    def capacity(self) -> int:
        """How many jobs it may hold at once: its slots, and the jobs it may hold for one
        (prefetch); its offer counts them all, as the server counts its locks."""
        ...

    @property
    def interval(self) -> float: ...

    def take_pushed(self, jobs: Sequence[Job], unreadable: Sequence[Unreadable] = ()) -> None:
        """Start jobs the server popped for this worker, and fail those that cannot run."""

    def pushes_may_be_lost(self) -> None:
        """The push channel's connection dropped: jobs pushed meanwhile never arrived."""


class Pickup:
    """Calls `news()` when an event may bring work (and once per (re)subscription: a put
    made just before it went unheard); hands pushed jobs to `taker`, if given."""

    def __init__(
        self,
        client: Client,
        served: ServedQueues,
        news: Callable[[], None],
        taker: PushTaker | None = None,
        member: Member | None = None,
        outage: ServerOutage | None = None,
    ) -> None:
        self._client = client
        self._outage = outage if outage is not None else ServerOutage(client.worker_name)
        self._served = served
        self._news = news
        self._taker = taker
        self._wanted = anyio.Event()  # set while the worker wants put events
        self._quiet = anyio.Event()  # set while nothing is subscribed
        self._quiet.set()
        self._scope: anyio.CancelScope | None = None
        self._subscriber: Subscriber | None = None
        self._log_channel = f"{client.prefix}log"
        self._pushed_channel = f"{client.prefix}pushed"
        self._offered: tuple[str, ...] = ()
        self._offered_slots = 0
        self._offered_at = float("-inf")
        self._member = member  # of a shared budget: offers its ceilings (see the docstring)
        self._offering = anyio.Lock()  # one offer, renewal or give-back at a time
        self._give_back_asked = anyio.Event()
        if member is not None:
            member.give_back = self._ask_give_back
            member.may_offer = partial(self._may_offer, member)
        # put events into offered queues whose push may be in the next read: jid -> its timer
        self._pushed: OrderedDict[str, None] = OrderedDict()
        self._put_listener_wanted = (
            False  # be one of the put listeners, as the last offer's reply said
        )
        self._listens_to_puts = False  # subscribed to put events now: one of the put listeners

    def want(self, wanted: bool) -> None:
        if wanted and not self._wanted.is_set():
            self._wanted.set()
        elif not wanted and self._wanted.is_set():
            self._wanted = anyio.Event()
            if self._scope is not None:
                self._scope.cancel()
            if self._subscriber is not None:
                self._subscriber.wake()

    @property
    def offers(self) -> bool:
        """Whether the worker offers to take pushed jobs at all."""
        return self._taker is not None

    @property
    def listening(self) -> bool:
        return not self._quiet.is_set()

    async def quiet(self) -> None:
        """Wait until nothing is subscribed: after ``want(False)``, every job pushed here
        has been handed over once this returns."""
        await self._quiet.wait()

    async def run(self) -> None:
        """Listen whenever wanted, for ever (resubscribing after a lost connection)."""
        if self._taker is not None and self._member is not None:
            async with anyio.create_task_group() as group:
                group.start_soon(self._give_back_when_asked, self._taker, self._member)
                await self._listen_for_pushes(self._taker)
        elif self._taker is not None:
            await self._listen_for_pushes(self._taker)
        else:
            await self._listen_to_events()

    async def withdraw(self) -> None:
        """Take back the offers made (the worker is stopping)."""
        try:
            if self._taker is not None:
                await self._withdraw_offer(self._taker)
        finally:
            if self._member is not None and not self.listening:  # no push can come any more
                self._member.settle()

    # -- through redis-py's pubsub: put events only (no push taker, or pushes refused) ------

    async def _listen_to_events(self) -> None:
        failures = 0
        while True:
            await self._wanted.wait()
            try:
                async with self._client.events("log") as events:
                    self._quiet = anyio.Event()
                    with anyio.CancelScope() as self._scope:
                        if not self._wanted.is_set():
                            continue
                        # a put before the subscription, maybe into a new queue: look again
                        self._served.stale()
                        self._news()
                        failures = 0
                        self._outage.answered()
                        async for event in events:
                            if self._brings_work(event.kind, event.queue, event.to):
                                self._news()
            except ConnectionLostError as error:
                failures += 1
                logger.debug("cannot subscribe to put events (%s)", error)
                self._outage.failed(error)
                await anyio.sleep(SUBSCRIBE.after(failures))
            finally:
                self._scope = None
                self._quiet.set()

    # -- through a Subscriber of its own: put events and pushed jobs -----------------------

    async def _listen_for_pushes(self, taker: PushTaker) -> None:
        failures = 0
        push_channel = f"{self._client.prefix}push:{taker.name}"
        while True:
            await self._wanted.wait()
            try:
                self._subscriber = subscriber = await Subscriber.open(
                    self._client.protocol.endpoint,
                    partial(self._receive, push_channel),
                    sharded=self._client.sharded_pubsub,
                )
                try:
                    while True:
                        await self._wanted.wait()
                        if not self._wanted.is_set():  # wanted, and no longer by now
                            continue
                        self._quiet = anyio.Event()
                        await self._listen_once(subscriber, taker, push_channel)
                        failures = 0
                        self._outage.answered()
                        self._quiet.set()
                finally:
                    self._subscriber = None
                    subscriber.close()
            except (ResponseError, ScriptError) as error:  # e.g. an ACL refusing them
                logger.warning("cannot listen for pushed jobs (%s); put events only", error)
                self._quiet.set()
                await self._listen_to_events()
            except (RedisConnectionError, ConnectionLostError, TimeoutError, OSError) as error:
                failures += 1
                taker.pushes_may_be_lost()
                self._offered_at = float("-inf")
                reason = str(error) or type(error).__name__  # a timeout says nothing
                logger.debug("cannot listen for put events and pushed jobs (%s)", reason)
                self._outage.failed(error if str(error) else reason)
                self._quiet.set()
                await anyio.sleep(SUBSCRIBE.after(failures))

    async def _listen_once(
        self, subscriber: Subscriber, taker: PushTaker, push_channel: str
    ) -> None:
        """Subscribe, offer, listen until no longer wanted, unsubscribe."""
        self._listens_to_puts = (
            self._put_listener_wanted
        )  # as last time, until the offer's reply says
        channels = self._put_event_channels() if self._listens_to_puts else []
        await subscriber.subscribe([push_channel, *channels])
        await self._offer_and_update_put_listening(subscriber, taker)
        self._served.stale()  # a put before the offer, maybe into a new queue
        self._news()
        while self._wanted.is_set():
            await subscriber.wait(apart(taker.interval))
            if self._wanted.is_set():  # every interval: renew the offer, check the line
                await self._offer_and_update_put_listening(subscriber, taker)
                with anyio.fail_after(max(taker.interval, 1.0)):
                    await subscriber.ping()
        await subscriber.unsubscribe()

    async def _offer_and_update_put_listening(
        self, subscriber: Subscriber, taker: PushTaker
    ) -> None:
        """Offer; then listen to put events as well, or stop, as the count of put listeners
        says."""
        async with self._offering:
            listeners = await self._offer(subscriber, taker)
        if listeners == _NOT_ASKED:
            pass  # as last time
        elif listeners is None or listeners < _PUT_LISTENERS:
            self._put_listener_wanted = True
        elif self._listens_to_puts and listeners > _PUT_LISTENERS:
            self._put_listener_wanted = random.random() < _PUT_LISTENERS / listeners  # noqa: S311  # not for secrets
        else:
            self._put_listener_wanted = self._listens_to_puts
        if self._put_listener_wanted and not self._listens_to_puts:
            await subscriber.subscribe(self._put_event_channels())
            self._listens_to_puts = True
            self._news()  # a put just before went unheard
        elif self._listens_to_puts and not self._put_listener_wanted:
            await subscriber.unsubscribe_from(self._put_event_channels())
            self._listens_to_puts = False

    def _put_event_channels(self) -> list[str]:
        return [self._log_channel, self._pushed_channel]

    async def _offer(self, subscriber: Subscriber, taker: PushTaker) -> int | None:
        """Offer to take the served queues' next jobs, unless the same offer stands since
        recently; the number of put listeners the server counted (None: no offer, or it cannot
        count them)."""
        names = tuple(self._served.names)
        if not names:
            return None  # not yet known: the first pop reads them, and the next quiet offers
        member = self._member
        slots = taker.capacity if member is None else member.ceiling_to_offer()
        if slots == 0:  # no slot of the shared budget to offer
            await self._take_back(subscriber, taker)
            return None
        now = anyio.current_time()
        same = names == self._offered and slots == self._offered_slots
        if same and now - self._offered_at < taker.interval / 2:
            return _NOT_ASKED
        gone = set(self._offered) - set(names)
        if gone:
            await self._client.protocol.call("worker.withdraw", taker.name, *gone)
        ceiling = None if member is None else member.offer(slots)  # counted before it is sent
        self._offered, self._offered_slots = names, slots  # from now on, maybe written
        lasts = 3 * taker.interval + 1
        listeners = await self._client.protocol.call(
            "worker.offer", taker.name, slots, lasts, *names
        )
        self._offered_at = now
        if member is not None:
            await self._settle(subscriber, member, ceiling, taker)
        return listeners if isinstance(listeners, int) else None

    async def _withdraw_offer(self, taker: PushTaker) -> None:
        if self._offered:
            offered, self._offered = self._offered, ()
            await self._client.protocol.call("worker.withdraw", taker.name, *offered)

    async def _take_back(self, subscriber: Subscriber | None, taker: PushTaker) -> None:
        """Withdraw the offer; then its slots are free in the shared budget."""
        await self._withdraw_offer(taker)
        if self._member is not None and self._member.ceilings:
            await self._settle(subscriber, self._member, None, taker)

    async def _settle(
        self, subscriber: Subscriber | None, member: Member, keep: Ceiling | None, taker: PushTaker
    ) -> None:
        """The budget drops the ceilings before `keep` once no push made under them can
        still arrive: after a PING on the push connection (no connection: the jobs pushed
        to the last one are lost, and taken back later; the ceilings stand until then)."""
        if subscriber is None or len(member.ceilings) == (0 if keep is None else 1):
            return
        with anyio.fail_after(max(taker.interval, 1.0)):
            await subscriber.ping()
        member.settle(keep)

    def _may_offer(self, member: Member) -> None:
        """The shared budget freed slots: offer now, if it has one to spare for this
        worker and it listens without an offer (instead of at the next renewal)."""
        subscriber = self._subscriber
        if subscriber is None or not self._wanted.is_set() or self._offered:
            return
        if member.ceiling_to_offer() > 0:
            subscriber.wake()

    def _ask_give_back(self) -> None:
        self._give_back_asked.set()

    async def _give_back_when_asked(self, taker: PushTaker, member: Member) -> None:
        """Give the offered, unheld slots back to the budget whenever a member lacks one."""
        while True:
            await self._give_back_asked.wait()
            self._give_back_asked = anyio.Event()
            async with self._offering:
                if member.offered() <= 0:
                    continue
                try:
                    await self._take_back(self._subscriber, taker)
                except (
                    ConnectionLostError,
                    RedisConnectionError,
                    ScriptError,
                    ResponseError,
                    TimeoutError,
                    OSError,
                ) as error:
                    logger.warning("cannot give back offered slots (%s)", error)

    def _receive(self, push_channel: str, messages: list[Message]) -> None:
        pushed: list[Job] = []
        unreadable: list[Unreadable] = []
        push_bytes = push_channel.encode()
        pushed_bytes = self._pushed_channel.encode()
        news = False
        for channel, payload in messages:
            if channel == push_bytes:
                jobs, refused = readable_jobs(self._client, json.loads(payload))
                pushed += jobs
                unreadable += refused
            elif channel == pushed_bytes:
                self._remember_pushed(payload.decode())
            elif b"put" not in payload and b"advanced" not in payload:
                continue  # completed, popped, failed...: no work, and no JSON to parse
            elif self._was_pushed(payload):
                continue
            else:
                event = parse_event(channel.decode(), payload.decode(), prefix=self._client.prefix)
                if event.kind == "put" and event.jid is not None and event.jid in self._pushed:
                    del self._pushed[event.jid]  # its job went to a worker already
                    continue
                news = news or self._brings_work(event.kind, event.queue, event.to)
        if (pushed or unreadable) and self._taker is not None:
            self._taker.take_pushed(pushed, unreadable)
        if news:
            self._news()

    def _was_pushed(self, payload: bytes) -> bool:
        """Whether `payload` is the put event of a job pushed to a worker, as put writes
        it (``{"jid":"<jid>","event":"put",...``): known without parsing the JSON, in the
        read that brings the push. Any other form is parsed and weighed in full."""
        if not self._pushed or not payload.startswith(b'{"jid":"'):
            return False
        end = payload.find(b'"', 8)
        if end < 0 or not payload.startswith(b'","event":"put"', end):
            return False
        jid = payload[8:end].decode(errors="replace")
        if b"\\" in payload[8:end] or jid not in self._pushed:
            return False
        del self._pushed[jid]
        return True

    def _remember_pushed(self, jid: str) -> None:
        self._pushed[jid] = None
        if len(self._pushed) > _PUSHED_REMEMBERED:
            self._pushed.popitem(last=False)

    def _brings_work(self, kind: str, queue: str | None, to: str | None) -> bool:
        if kind == RECONNECTED:
            return True
        target = queue if kind == "put" else to if kind == "advanced" else None
        if target is None or not self._served.selection.may_serve(target):
            return False
        if target not in self._served.names:
            self._served.stale()  # a new queue a pattern may match
        return True
