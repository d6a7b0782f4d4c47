"""The relay: moves committed outbox rows to the server as jobs, under the jids chosen at
the call, then deletes them.

Exactly one job per row: a row is put with a dedup id of its own (``outbox:<jid>:<row>``,
held for `dedup_ttl` seconds) unless the put named one, so a row put twice (a relay that
died between the put and the delete, a put whose reply was lost) is dropped the second
time. A refused put (a full server, a failover, a lost connection) leaves its rows in the
outbox, tried again later with a growing wait."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

import anyio
import anyio.from_thread
import anyio.to_thread
from sqlalchemy import Engine

from aqless._concurrency.backoff import Delays
from aqless.contracts import Client
from aqless.errors import AqlessError, ConfigurationError, NotDurableError
from aqless.outbox.record import request_of
from aqless.outbox.store import OutboxRow, OutboxStats, OutboxStore, open_engine
from aqless.puts import Dedup, Durable

logger = logging.getLogger(__name__)

RelayDurability: TypeAlias = Durable | Literal["auto"]
"""`Relay`'s `durable`: as `put`'s, or ``"auto"``: durable where the server can confirm it
(WAITAOF, the append-only file on), plain puts with a logged warning where it cannot."""

RETRY = Delays(1.0, 60.0)
"""How long a refused row waits before its next try: 1 s, doubling up to a minute (each
wait jittered between half and all of it)."""


@dataclass(slots=True)
class RelayReport:
    """What one pass of `Relay.relay_once` did.

    Attributes:
        relayed: rows put as jobs and deleted.
        refused: rows the server refused, left for a later try.
        errors: why they were refused.

    Examples:
        ```python
        report = await relay.relay_once()
        print(report.relayed, report.refused, report.errors)
        ```
    """

    relayed: int = 0
    refused: int = 0
    errors: list[str] = field(default_factory=list)


class Relay:
    """Moves the outbox's committed rows to the server.

    ``await relay.run()`` relays until cancelled; ``await relay.drain()`` relays until no
    row is due; ``await relay.relay_once()`` relays one batch. Given a URL, the relay makes
    its own engine: use it as ``async with Relay(...) as relay`` (or ``await
    relay.aclose()``) to close its connections. Several relays (in one
    process or many) may run at once on one database: each claims its own rows.

    Args:
        client: the aqless client the jobs are put with.
        database: the application's database: a SQLAlchemy URL (``postgresql+psycopg://...``,
            ``sqlite:///app.db``) or `Engine` (a blocking one: the relay runs its queries in
            a thread).
        batch: rows claimed and put in one round (default 500).
        interval: seconds `run` waits when no row is due (default 0.5).
        durable: ``"auto"`` (default): durable puts where the server confirms them, else
            plain ones with a logged warning; True or a `Durability`: only durable puts (a
            server that cannot confirm them leaves the rows in the outbox); False: plain.
        dedup_ttl: seconds a relayed row's own dedup id is held (a row put again within
            them makes no second job); default 86400, a day.
        clock: the Unix time now (default `time.time`).

    Raises:
        ConfigurationError: `batch` below 1, or a URL whose driver is not installed (the
            error names the extra).

    Examples:
        ```python
        from aqless.outbox import Relay

        async with aqless.Client() as client:
            async with Relay(client, "postgresql+psycopg://app@db/app") as relay:
                await relay.run()  # until cancelled
        ```
    """

    def __init__(
        self,
        client: Client,
        database: Engine | str,
        *,
        batch: int = 500,
        interval: float = 0.5,
        durable: RelayDurability = "auto",
        dedup_ttl: float = 86400.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if batch < 1:
            raise ConfigurationError(f"a relay's batch must be 1 or more, got {batch}")
        self.client = client
        self._owns_engine = isinstance(database, str)
        self.engine = open_engine(database) if isinstance(database, str) else database
        self.store = OutboxStore(self.engine)
        self.batch = batch
        self.interval = interval
        self.durable: RelayDurability = durable
        self.dedup_ttl = dedup_ttl
        self.clock = clock

    async def __aenter__(self) -> Relay:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the database connections of an engine the relay made from a URL (one it
        was given stays open: it is the caller's).

        Examples:
            ```python
            relay = Relay(client, "sqlite:///app.db")
            try:
                await relay.drain()
            finally:
                await relay.aclose()
            ```
        """
        if self._owns_engine:
            await anyio.to_thread.run_sync(self.engine.dispose)

    async def stats(self) -> OutboxStats:
        """How many rows wait, how many were refused, and the oldest one's age
        (`OutboxStats`).

        Examples:
            ```python
            print((await relay.stats()).pending)
            ```
        """
        return await anyio.to_thread.run_sync(self.store.stats, self.clock())

    async def relay_once(self) -> RelayReport:
        """Claim up to `batch` due rows, put them, delete those that landed and put off the
        others (each waits 1 s, doubling up to a minute); returns what it did.

        Examples:
            ```python
            report = await relay.relay_once()
            ```
        """
        return await anyio.to_thread.run_sync(self._relay_claimed)

    async def drain(self) -> int:
        """Relay until no row is due; returns how many rows were relayed. Rows refused in
        this call wait for their next try (they are not due), so drain ends.

        Examples:
            ```python
            relayed = await relay.drain()  # e.g. in a test, after the commit
            ```
        """
        relayed = 0
        while True:
            report = await self.relay_once()
            relayed += report.relayed
            if report.relayed + report.refused == 0:
                return relayed

    async def run(self) -> None:
        """Relay for ever (until cancelled), waiting `interval` seconds when no row is due.
        A database that refuses a claim is logged and tried again.

        Examples:
            ```python
            task = asyncio.create_task(relay.run())
            ...
            task.cancel()
            ```
        """
        while True:
            try:
                report = await self.relay_once()
            except Exception as error:  # the database is away: try again, don't stop
                logger.warning("outbox relay: the database refused a claim: %s", error)
                report = RelayReport(errors=[str(error)])
            if report.relayed + report.refused == 0:
                await anyio.sleep(self.interval)

    def _relay_claimed(self) -> RelayReport:
        """One round, in a worker thread (the claim's connection stays in this thread)."""
        with self.store.claimed(self.batch, self.clock()) as claim:
            if not claim.rows:
                return RelayReport()
            landed, refused = anyio.from_thread.run(self._put, claim.rows)
            claim.delete([row.id for row in claim.rows if row.id in landed])
            report = RelayReport(relayed=len(landed))
            now = self.clock()
            for error, rows in refused.items():
                report.refused += len(rows)
                report.errors.append(error)
                claim.put_off({row.id: now + RETRY.after(row.attempts + 1) for row in rows}, error)
                logger.warning(
                    "outbox relay: %d rows stay in the outbox for a later try: %s", len(rows), error
                )
            return report

    async def _put(self, rows: list[OutboxRow]) -> tuple[set[int], dict[str, list[OutboxRow]]]:
        """Put `rows`, a queue at a time; the ids of those that landed, and the others by
        the error that refused them."""
        by_queue: dict[str, list[OutboxRow]] = {}
        for row in rows:
            by_queue.setdefault(row.queue, []).append(row)
        landed: set[int] = set()
        refused: dict[str, list[OutboxRow]] = {}
        for queue, queued in by_queue.items():
            try:
                await self._put_queue(queue, queued)
            except (AqlessError, OSError) as error:
                refused.setdefault(f"{type(error).__name__}: {error}", []).extend(queued)
            else:
                landed.update(row.id for row in queued)
        return landed, refused

    async def _put_queue(self, queue: str, rows: list[OutboxRow]) -> None:
        now = self.clock()
        requests = [
            request_of(
                row.jid,
                row.klass,
                row.data,
                row.options,
                now=now,
                fallback_dedup=Dedup(f"outbox:{row.jid}:{row.id}", ttl=self.dedup_ttl),
            )
            for row in rows
        ]
        target = self.client.queues[queue]
        if self.durable != "auto":
            await target.put_many_results(requests, durable=self.durable)
            return
        try:
            await target.put_many_results(requests, durable=True)
        except (ConfigurationError, NotDurableError) as error:
            if isinstance(error, NotDurableError) and "appendonly" not in error.detail:
                raise  # too few copies in time: try again later
            logger.warning(
                "outbox relay: the server cannot confirm durable puts (%s); relaying with plain"
                " puts from now on (durable=False to ask for none, durable=True to insist)",
                error,
            )
            self.durable = False
            # the jobs a refused WAITAOF followed are put; their own dedup ids drop them here
            await target.put_many_results(requests)
