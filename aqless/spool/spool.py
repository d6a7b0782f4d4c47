"""`Spool`: puts that survive an outage of the server (reliable push).

A spooled put goes to the server at once when it can. When the server cannot be reached (a
refused or reset connection, a timeout: ConnectionLostError, a server still loading its
data...), the put is kept in the spool instead, and a task of the client sends the spool's
puts to the server, oldest first, once it answers again. While puts wait in the spool, new
ones go behind them, so the server gets them in the order they were made.

Exactly once: every spooled put names its jid before anything is sent, and carries a dedup
id, ``spool:<jid>``, held for `dedup_ttl` seconds (aqless.puts.Dedup's ttl mode). A put whose
reply was lost (it may have run) is sent again from the spool; the server then finds the id
held and makes no second job. A put that names its own dedup id, or ``replace=False``,
keeps it instead (``replace=False`` is a put made once by its jid)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack, cast

import anyio

from aqless import rules
from aqless._concurrency.backoff import SPOOL, Delays
from aqless.errors import (
    AqlessError,
    ClientClosedError,
    ConnectionLostError,
    ServerFullError,
    SpoolFullError,
)
from aqless.puts import (
    Dedup,
    JobClass,
    PutOptions,
    PutRequest,
    default_options,
    inside_hooks,
    new_jid,
    prepare_put,
)
from aqless.spool.entries import SpooledPut
from aqless.spool.stores import FileStore, MemoryStore

if TYPE_CHECKING:
    from aqless.contracts import ScriptClient

__all__ = ["PutReceipt", "Spool", "SpoolStats"]

logger = logging.getLogger(__name__)

#: Seconds a closing client gives its spool's last flush.
CLOSING_FLUSH = 3.0


@dataclass(frozen=True, slots=True)
class PutReceipt:
    """What a spooled put did with the job.

    Attributes:
        jid: the job's id (known whether it was queued or spooled).
        spooled: True when the job waits in the spool, to be put once the server answers;
            False when the server has it (`queued`).
        deduplicated: queued, but no new job was made: a job held the put's dedup id (the
            jid is that job's), or, with ``replace=False``, a job of the jid existed.
            Default False.

    Examples:
        ```python
        receipt = await spool.put("emails", "app.jobs.SendEmail", {"to": "ada@example.com"})
        if receipt.spooled:
            print(f"job {receipt.jid} waits in the spool: sent when the server is back")
        ```
    """

    jid: str
    spooled: bool
    deduplicated: bool = False

    @property
    def queued(self) -> bool:
        """Whether the server took the put (the job exists)."""
        return not self.spooled


@dataclass(frozen=True, slots=True)
class SpoolStats:
    """A spool's figures since it was made.

    Attributes:
        depth: puts waiting in the spool now.
        capacity: the most it holds.
        spooled: puts it took (the server away, or puts ahead of them waiting).
        flushed: spooled puts the server has taken since.
        dropped: spooled puts the server refused at the flush (logged, never sent again).
        refused: puts refused with SpoolFullError, the spool full.

    Examples:
        ```python
        stats = spool.stats()
        print(f"{stats.depth}/{stats.capacity} waiting, {stats.flushed} of {stats.spooled} sent")
        ```
    """

    depth: int
    capacity: int
    spooled: int
    flushed: int
    dropped: int
    refused: int


class Spool:
    """A producer's buffer for puts while the server is away: ``client.spool(...)`` makes
    one, whose flushing task starts and stops with the client. See the module's text.

    Args:
        client: the client the puts go to.
        capacity: the most puts it holds (default 10,000); one more, while the server is
            away, is a SpoolFullError.
        path: a file to keep the puts in (append-only, each put fsynced before `put`
            returns), so that they outlive the process: the next process that opens a
            spool on the same file flushes them; ``{pid}`` in it stands for the process's
            id (a file per process). Default None: in memory, lost with the process.
        dedup_ttl: seconds each put's dedup id is held on the server (default 86,400: a
            day); keep it above the longest time a put may wait in the spool.
        batch: puts sent in one round trip when flushing (default 500).

    Raises:
        InvalidValueError: `capacity` or `batch` not a whole number from 1, `dedup_ttl`
            not a positive number of seconds, or an empty `path`.
        ConfigurationError: the file at `path` is in use by another process's spool, or
            damaged before its last line (a torn last line is dropped, with a warning).

    Examples:
        ```python
        async with aqless.Client() as client:
            spool = client.spool(path="/var/lib/app/puts-{pid}.spool")
            receipt = await spool.put("emails", "app.jobs.SendEmail", {"to": "ada@example.com"})
        ```
    """

    def __init__(
        self,
        client: ScriptClient,
        *,
        capacity: int = 10_000,
        path: str | os.PathLike[str] | None = None,
        dedup_ttl: float = 86_400.0,
        batch: int = 500,
    ) -> None:
        self.capacity: int = rules.check("spool.capacity", capacity, "spool")
        self.dedup_ttl: float = rules.check("spool.dedup_ttl", dedup_ttl, "spool")
        self.batch: int = rules.check("spool.batch", batch, "spool")
        self._client = client
        if path is None:
            self._store: MemoryStore = MemoryStore()
        else:
            text = os.fspath(path) if isinstance(path, os.PathLike) else path
            checked: str = rules.check("spool.path", text, "spool")
            self._store = FileStore(Path(checked.replace("{pid}", str(os.getpid()))))
        self._counts = {"spooled": 0, "flushed": 0, "dropped": 0, "refused": 0}
        self._waiting = asyncio.Event()  # set while puts wait
        if self._store.depth:
            self._waiting.set()
        #: the waits between a flush's tries while the server is away
        self.retry: Delays = SPOOL
        self._task: asyncio.Task[None] | None = None
        self._flushing = asyncio.Lock()  # one flush at a time: the task's, or `flush`'s
        self._closed = False

    def __repr__(self) -> str:
        return f"<Spool {self._store.name} {self.depth}/{self.capacity}>"

    @property
    def name(self) -> str:
        """``memory``, or the spool file's path."""
        return self._store.name

    @property
    def depth(self) -> int:
        """How many puts wait in the spool now."""
        return self._store.depth

    def stats(self) -> SpoolStats:
        """The spool's figures (see `SpoolStats`); reads no server.

        Examples:
            ```python
            if spool.stats().refused:
                logger.warning("the spool was full: puts were refused")
            ```
        """
        return SpoolStats(self.depth, self.capacity, **self._counts)

    async def put(
        self, queue: str, klass: JobClass, data: Any = None, **options: Unpack[PutOptions]
    ) -> PutReceipt:
        """Put a job into `queue` (as ``client.queues[queue].put_result`` does, with the
        same options), or, when the server cannot be reached (ConnectionLostError, or
        ServerUnavailableError: loading, read-only...) or puts wait in the spool ahead of
        it, keep it in the spool. Its jid is chosen at the call, and, unless it names its
        own `dedup` or ``replace=False``, it carries the dedup id ``spool:<jid>`` held for
        `dedup_ttl` seconds, so that a put sent again makes no second job.

        Args:
            queue: the queue's name.
            klass: the job's class (a class, a handler function, or its dotted name).
            data: the job's data (default None), JSON-encodable or fitting a typed
                handler.
            **options: what ``Queue.put`` takes (jid, priority, delay, at, tags, retries,
                depends, throttles, dedup, rate_limits, group, replace); no `durable`
                nor `requeue`.

        Returns:
            The job's jid, and whether it was queued or spooled.

        Raises:
            ClientClosedError: the spool (or its client) was closed.
            SpoolFullError: the server away and the spool holding `capacity` puts: the
                put was not accepted, nothing of it kept.
            ServerFullError: the server answered that it is out of memory or cannot
                persist (``OOM``, ``MISCONF``): not spooled.
            InvalidArgumentError: bad input, refused before anything is sent or kept (an
                option outside its rule is an InvalidValueError, data that does not fit a
                typed handler a JobDataError).
            ConfigurationError: options that do not go together (``dedup=`` with
                ``replace=False``, ``delay=`` with ``at=``).

        Examples:
            ```python
            receipt = await spool.put("emails", "app.jobs.SendEmail", {"to": "ada@example.com"},
                                      priority=10, tags=["signup"])
            status = 201 if receipt.queued else 202  # 202: accepted, sent when the server is back
            ```
        """
        if self._closed:
            raise ClientClosedError("this spool's client is closed; make a new one")
        self.start()
        jid = options.get("jid") or default_options(klass, data).get("jid") or new_jid()
        chosen = self._deduplicated(options, jid)
        if not self._store.waiting(None):  # nothing waits ahead of it: straight to the server
            try:
                result = await self._client.queues[queue].put_result(klass, data, **chosen)
                return PutReceipt(result.jid, spooled=False, deduplicated=result.deduplicated)
            except ServerFullError:
                raise
            except ConnectionLostError as error:
                logger.debug("spooling %s: %s", jid, error)
        return await self._spool(queue, klass, data, chosen)

    def _deduplicated(self, options: PutOptions, jid: str) -> PutOptions:
        """`options` with the jid, and, unless they name their own dedup id or
        ``replace=False``, the spool's (``spool:<jid>``)."""
        given = dict(options)
        given["jid"] = jid
        if given.get("dedup") is None and given.get("replace") is not False:
            given["dedup"] = Dedup(f"spool:{jid}", ttl=self.dedup_ttl)
        return cast(PutOptions, given)

    async def _spool(
        self, queue: str, klass: JobClass, data: Any, options: PutOptions
    ) -> PutReceipt:
        """Keep the put in the spool, inside the client's put hooks (as a put sent is)."""

        async def keep(requests: list[PutRequest]) -> list[str]:
            return [await self._keep(queue, request) for request in requests]

        request = PutRequest(klass, data, **options)
        target = self._client.queues[queue]
        (jid,) = await inside_hooks(self._client.put_hooks, target, keep)([request])
        return PutReceipt(jid, spooled=True)

    def _client_of(self, shard: int | None) -> ScriptClient:
        """The client a put placed on `shard` is sent through (a plain client's: itself)."""
        return self._client

    async def _keep(self, queue: str, request: PutRequest, shard: int | None = None) -> str:
        client = self._client_of(shard)
        put = prepare_put(
            request.klass,
            request.data,
            request.options(),
            worker=client.worker_name,
            queue=queue,
            clock=client.clock,
            codec=client.codec,
        )
        if self.depth >= self.capacity:
            self._counts["refused"] += 1
            raise SpoolFullError(put.jid, self.capacity)
        self._store.append(SpooledPut.of(self._store.next_number, put, client.clock(), shard))
        self._counts["spooled"] += 1
        self._waiting.set()
        await self._store.synced()  # on disk before the call returns (a file's)
        return put.jid

    async def flush(self) -> int:
        """Send the spool's puts to the server now, oldest first, `batch` puts a round
        trip, until none waits. The client's own task flushes by itself: call this to wait
        for it, e.g. before a planned exit. A put the server refuses is logged and counted
        as dropped (`SpoolStats.dropped`), never sent again.

        Returns:
            How many puts the server answered (those it refused, dropped, included).

        Raises:
            ConnectionLostError: the server could not be reached (the puts not sent wait
                for the next flush).
            ClientClosedError: the spool's client was closed.

        Examples:
            ```python
            sent = await spool.flush()  # before a planned exit: leave nothing behind
            assert spool.depth == 0
            ```
        """
        landed = 0
        while self.depth:
            landed += await self._flush_batch()
        return landed

    async def _flush_batch(self) -> int:
        """Send the oldest puts (a batch) in one round trip; how many the server took."""
        async with self._flushing:
            return await self._send_batch()

    async def _send_batch(self) -> int:
        """Each shard's oldest puts (a batch a shard; a plain client's are one shard's),
        a round trip a shard; a shard that cannot be reached keeps its puts waiting and
        its error is raised once the others' are sent."""
        done = 0
        away: ConnectionLostError | None = None
        for shard in self._store.shards():
            try:
                done += await self._send_share(shard, self._store.head(self.batch, shard))
            except ConnectionLostError as error:
                away = away or error
        if away is not None:
            raise away
        return done

    async def _send_share(self, shard: int | None, puts: list[SpooledPut]) -> int:
        if not puts:
            return 0
        client = self._client_of(shard)
        now = client.clock()
        replies = await client.protocol.many(
            "queue.put",
            [put.arguments_at(now) for put in puts],
            [put.order for put in puts],
            commands=[put.command for put in puts],
        )
        taken: list[int] = []
        away: ConnectionLostError | None = None
        for put, reply in zip(puts, replies, strict=True):
            if isinstance(reply, ConnectionLostError):
                away = reply  # this put and those behind it wait for the next try
                break
            if isinstance(reply, BaseException):  # refused: sending it again cannot help
                logger.error("spool %s: the server refused job %s: %s", self.name, put.jid, reply)
                self._counts["dropped"] += 1
            else:
                self._counts["flushed"] += 1
            taken.append(put.number)
        if taken:
            self._store.drop(taken)
        if away is not None:
            raise away
        return len(taken)

    def start(self) -> None:
        """Start the flushing task (the client's `open` does; so does the first `put`).
        Does nothing when it runs already, once the spool is closed, or outside an event
        loop.

        Examples:
            ```python
            spool = client.spool(path="/var/lib/app/puts.spool")  # at import: no loop yet
            ...
            spool.start()  # in the loop: send what the file holds without waiting for a put
            ```
        """
        if self._task is not None or self._closed:
            return
        try:
            self._task = asyncio.get_running_loop().create_task(self._run(), name=repr(self))
        except RuntimeError:  # no loop yet: the first put starts it
            return

    async def _run(self) -> None:
        failures = 0
        while True:
            if not self.depth:
                self._waiting.clear()
                await self._waiting.wait()
            try:
                await self._flush_batch()
                if failures:
                    logger.info("spool %s: the server answers again; %d puts wait", self.name,
                                self.depth)  # fmt: skip
                failures = 0
            except ClientClosedError:
                return  # the client closes: its aclose makes the last flush
            except ConnectionLostError as error:
                failures += 1
                if failures == 1:
                    logger.info("spool %s: %d puts wait for the server: %s", self.name,
                                self.depth, error)  # fmt: skip
            except Exception:  # a flush must never stop for good
                failures += 1
                logger.exception("spool %s: flush failed", self.name)
            if failures:
                await anyio.sleep(self.retry.after(failures))

    async def aclose(self) -> None:
        """Stop the flushing task, try one last flush (3 seconds at most), then release
        the file. Puts still waiting are logged: kept in the file for the next process, or,
        in memory, lost. The client's `aclose` calls this; calling it again does nothing.

        Examples:
            ```python
            spool = client.spool(path=left_by_a_dead_process)
            await spool.flush()
            await spool.aclose()  # releases the file before the client closes
            ```
        """
        if self._closed:
            return
        self._closed = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self.depth:
            with anyio.move_on_after(CLOSING_FLUSH), contextlib.suppress(AqlessError):
                await self.flush()
        if self.depth:
            durable = isinstance(self._store, FileStore)
            kept = "kept in the file for the next process" if durable else "lost (in memory)"
            logger.warning("spool %s closed with %d puts waiting: %s", self.name, self.depth,
                           kept)  # fmt: skip
        self._store.close()
