"""Client: one connection pool to one qless deployment, and the way in to everything else."""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any, Literal, Self

import anyio
import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster

from aqless import codecs, rules
from aqless._client import connecting
from aqless._client.config import Config as Config
from aqless._client.connecting import EMBEDDED_URL_SHAPE as EMBEDDED_URL_SHAPE
from aqless._client.connecting import address_url as address_url
from aqless._client.connecting import default_worker_name as default_worker_name
from aqless._client.jobs import Jobs as Jobs
from aqless._client.jobs import listed_objects as listed_objects
from aqless._client.queues import Queues as Queues
from aqless._client.sharded import ShardedConfig as ShardedConfig
from aqless._client.sharded import ShardedJobs as ShardedJobs
from aqless._client.sharded import ShardedWorkers as ShardedWorkers
from aqless._client.tags import TAG_PAGE as TAG_PAGE
from aqless._client.tags import ShardedTags as ShardedTags
from aqless._client.tags import Tags as Tags
from aqless._client.throttles import Throttle as Throttle
from aqless._client.throttles import Throttles as Throttles
from aqless._client.workers import CONTROL_EVENT as CONTROL_EVENT
from aqless._client.workers import CONTROL_TTL as CONTROL_TTL
from aqless._client.workers import Workers as Workers
from aqless._client.workers import worker_control_key as worker_control_key
from aqless._client.workers import worker_index_key as worker_index_key
from aqless._client.workers import worker_record_key as worker_record_key
from aqless._connection import cluster as _cluster
from aqless._connection import urls
from aqless._connection.lifecycle import ClientState, Lifecycle
from aqless._connection.protocol import Clock, ScriptCaller, ScriptConnection
from aqless._connection.server_checks import check_eviction_policy
from aqless.batches.client import Batches
from aqless.codecs import PayloadCodec
from aqless.contracts.derived import ClientScripted
from aqless.errors import ConfigurationError
from aqless.events import EventStream, PubSubSource, wait_for
from aqless.flows.client import Flows
from aqless.limits import RateLimits
from aqless.models import JobState
from aqless.patterns import QueuePatterns
from aqless.queue import PutHook
from aqless.results import await_result
from aqless.scripts.loader import AnyRedis
from aqless.spool import Spool
from aqless.workflows import signals


class Client(ClientScripted):
    """A connection to one qless deployment (one server, one key namespace).

    ``Client(url)`` connects to ``redis://``, ``rediss://`` (TLS) or ``unix://`` URLs, to
    ``redis+sentinel://host:port[,host:port]/service`` (the primary Sentinel names) and to
    ``redis+cluster://host:port[,host:port]`` (with a hash-tagged namespace), with
    the username and password of an ACL user in the URL or as keywords; extra keywords go to
    ``redis.asyncio.Redis`` (e.g. ``db``, ``ssl_ca_certs``, ``socket_timeout``) and to
    aqless's own connection, which takes every kind of deployment the same way (an option
    it cannot honour, such as ``protocol=3``, is a ConfigurationError).
    ``Client(host="foo.bar.com", port=1234)`` or ``Client(unix_socket_path=...)`` name the
    server instead of a URL. Bad options raise ConfigurationError here, before anything
    connects or starts. ``Client(redis=r)``
    uses a client you made (it must decode responses; a ``RedisCluster`` needs a hash-tagged
    namespace: see ``from_cluster``). ``Client()`` uses ``AQLESS_URL`` or
    ``REDIS_URL``, else an embedded Valkey whose data lives in
    ``~/.local/share/aqless/valkey``
    (``AQLESS_HOME`` moves it; see aqless.embedded).

    Use it as ``async with Client(...) as client`` or call ``await client.close()``.

    Args:
        namespace: keep this deployment's keys under ``<namespace>:ql:`` instead of ``ql:``;
            a hash tag such as ``"{billing}"`` keeps them in one Redis Cluster slot.
        worker_name: how this process appears to the server (default ``<host>-<pid>``).
        clock: the time source for ``now`` (default ``time.time``). Every client and worker
            of a deployment must agree on the time within a few seconds: lock expiry,
            schedules and statistics all use the clock of whoever calls (a lock of H seconds
            tolerates clocks 2H/3 apart; docs/production.md, "Clocks").
        strict: refuse to open (ConfigurationError) a server whose ``maxmemory-policy``
            evicts keys, instead of logging a warning (docs/production.md, "Server memory").
        sharded_pubsub: listen to events with SSUBSCRIBE, as the script of a shard of a
            sharded deployment publishes them (SPUBLISH); `ShardedClient` sets it on the
            clients of its shards.
        script_connection: what carries the script calls: ``"lean"`` (aqless's own
            pipelined connection, the default) or ``"redis-py"`` (redis-py's pool: a
            diagnostic, slower). Without it, ``AQLESS_SCRIPT_CONNECTION`` says, read when
            the client is made.
        codec: an `aqless.codecs.PayloadCodec`: compression, encryption and a claim-check
            store for job data, results and checkpoints (docs/guides/codecs.md).
        **connection_options: go to ``redis.asyncio.Redis`` and to aqless's own connection
            (``db``, ``username``, ``password``, ``ssl_ca_certs``, ``socket_timeout``...).
            ``max_connections`` caps the connection pool: a call that finds every
            connection busy then waits up to ``timeout`` seconds (default 20) for one.
            Without a cap (the default) a burst of concurrent calls opens as many
            connections as it needs, and each call costs less.

    Raises:
        ConfigurationError: two of `url`, `redis` and `host`/`port`/`unix_socket_path`
            given; connection options given with `redis`; a `redis` client that does not
            decode responses; a ``RedisCluster`` without a hash-tagged `namespace`; an
            option the connection cannot honour. Raised before anything connects.
        InvalidValueError: `script_connection` (or ``AQLESS_SCRIPT_CONNECTION``) is
            neither ``"lean"`` nor ``"redis-py"``.

    Examples:
        ```python
        async with aqless.Client("redis://localhost:6379/0", namespace="billing") as client:
            jid = await client.queues["emails"].put("app.jobs.SendEmail", {"to": "ada@example.com"})
        ```
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        redis: AnyRedis | None = None,
        namespace: str | None = None,
        worker_name: str | None = None,
        clock: Clock = time.time,
        host: str | None = None,
        port: int | None = None,
        unix_socket_path: str | None = None,
        strict: bool = False,
        sharded_pubsub: bool = False,
        script_connection: ScriptConnection | None = None,
        codec: PayloadCodec | None = None,
        **connection_options: Any,
    ) -> None:
        # Everything is checked before anything starts: an embedded server is only started
        # by open(), and only for a client whose options are good.
        if url is not None and redis is not None:
            raise ConfigurationError("give a url or a redis client, not both")
        address = connecting.address_url(host, port, unix_socket_path)
        if address is not None and (url is not None or redis is not None):
            raise ConfigurationError(
                "give host/port/unix_socket_path or a url or a redis client, not two of them"
            )
        if redis is not None and connection_options:
            raise ConfigurationError(
                f"connection options ({', '.join(connection_options)}) are for a client that "
                "connects by itself; the redis client given was made with its own"
            )
        url = url or address
        self.url = url or os.environ.get("AQLESS_URL") or os.environ.get("REDIS_URL")
        self.namespace = namespace
        self.prefix = f"{namespace}:ql:" if namespace else "ql:"
        self.worker_name = worker_name or connecting.default_worker_name()
        self.clock = clock
        self.strict = strict
        self.sharded_pubsub = sharded_pubsub
        self.script_connection: ScriptConnection = rules.check(
            "client.script_connection",
            script_connection or os.environ.get("AQLESS_SCRIPT_CONNECTION") or "lean",
            "Client",
        )
        #: What job data, results and checkpoints go through (aqless.codecs); without one,
        #: what ``AQLESS_KEYS`` and ``AQLESS_BLOB_DIR`` describe, when set.
        self.codec: PayloadCodec | None = codec or codecs.from_environment()
        self._connection_options = connection_options
        self._owns_redis = redis is None
        self._sentinels: list[aioredis.Redis] = []  # connections to Sentinel, if any
        self._protocol: ScriptCaller | None = None
        self._lifecycle = Lifecycle("this client")
        if redis is not None:
            if not redis.get_encoder().decode_responses:
                raise ConfigurationError("the redis client must use decode_responses=True")
            if isinstance(redis, RedisCluster) and _cluster.hash_tag(namespace or "") is None:
                raise ConfigurationError(
                    "on a Redis Cluster the namespace must carry a hash tag, such as "
                    f"'{{billing}}', so that all of its keys are in one slot; got {namespace!r}"
                )
            self._use(redis)
        elif self.url is not None and urls.scheme_of(self.url) in (urls.SENTINEL, urls.CLUSTER):
            many, self._sentinels = connecting.connect_many(
                urls.parse(self.url), namespace, connection_options
            )
            self._use(many)
        elif self.url is not None:
            self._use(connecting.connect(self.url, self._connection_options))
        else:  # the embedded server's URL is known once open() has found it
            connecting.connection_pool(connecting.EMBEDDED_URL_SHAPE, connection_options)
        self.queues = Queues(self)
        self.jobs = Jobs(self)
        self.batches = Batches(self)

        self.flows = Flows(self)
        self.config = Config(self)
        self.workers = Workers(self)
        self.throttles = Throttles(self)
        self.rate_limits = RateLimits(self)
        self.tags = Tags(self)
        self.queue_patterns = QueuePatterns(self)
        #: Hooks around every ``put`` and ``put_many`` of this client (see aqless.queue.PutHook);
        #: ``aqless.tracing.instrument(client)`` adds one.
        self.put_hooks: list[PutHook] = []
        self._spools: list[Spool] = []  # flushing while the client is open (see spool)

    @classmethod
    def from_sentinel(
        cls,
        sentinels: Sequence[tuple[str, int]],
        service_name: str,
        *,
        namespace: str | None = None,
        worker_name: str | None = None,
        clock: Clock = time.time,
        sentinel_options: dict[str, Any] | None = None,
        **connection_options: Any,
    ) -> Client:
        """A client that follows the primary that Redis Sentinel names for `service_name`
        (the URL ``redis+sentinel://host:port,host:port/service`` does the same).

        Args:
            sentinels: the (host, port) pairs of the Sentinels to ask.
            service_name: the name the Sentinels monitor the primary under.
            namespace: as `Client`'s (default None: keys under ``ql:``).
            worker_name: as `Client`'s (default ``<host>-<pid>``).
            clock: as `Client`'s (default ``time.time``, in seconds).
            sentinel_options: keywords for the connections to the Sentinels themselves
                (default None: none), such as their own ``password``.
            **connection_options: keywords for the connections to the primary.

        Examples:
            ```python
            client = aqless.Client.from_sentinel(
                [("sentinel-1", 26379), ("sentinel-2", 26379)], "mymaster", namespace="billing"
            )
            async with client:
                print(await client.config.get("heartbeat"))
            ```
        """
        primary, sentinel_connections = connecting.sentinel_primary(
            sentinels, service_name, sentinel_options or {}, connection_options
        )
        client = cls(redis=primary, namespace=namespace, worker_name=worker_name, clock=clock)
        client._owns_redis = True
        client._sentinels = sentinel_connections
        return client

    @classmethod
    def from_cluster(
        cls,
        nodes: str | Sequence[tuple[str, int]],
        *,
        namespace: str,
        worker_name: str | None = None,
        clock: Clock = time.time,
        sharded_pubsub: bool = False,
        **connection_options: Any,
    ) -> Client:
        """A client of a deployment on a Redis or Valkey Cluster, found from a ``redis://``
        URL of one of its nodes or from (host, port) pairs; extra keywords go to
        ``redis.asyncio.cluster.RedisCluster`` (`sharded_pubsub`: as `Client`'s, for one
        shard of a sharded deployment).

        The namespace must carry a hash tag (``"{billing}"``): all of the deployment's keys
        are then in one slot, on one node; deployments with different tags may land on
        different nodes. Calls go to that node; events are read from it too.

        Args:
            nodes: a ``redis://`` URL of one node, or (host, port) pairs of some nodes.
            namespace: the deployment's namespace, with a hash tag (``"{billing}"``).
            worker_name: as `Client`'s (default ``<host>-<pid>``).
            clock: as `Client`'s (default ``time.time``, in seconds).
            sharded_pubsub: as `Client`'s (default False).
            **connection_options: keywords for ``redis.asyncio.cluster.RedisCluster``.

        Raises:
            ConfigurationError: the namespace has no hash tag, or `nodes` is not an
                address a cluster can be found from. Raised before anything connects.

        Examples:
            ```python
            client = aqless.Client.from_cluster("redis://node-1:7000", namespace="{billing}")
            async with client:
                await client.queues["invoices"].put("app.jobs.Invoice", {"id": 7})
            ```
        """
        if _cluster.hash_tag(namespace) is None:  # before anything connects
            raise ConfigurationError(
                "on a Redis Cluster the namespace must carry a hash tag, such as "
                f"'{{billing}}', so that all of its keys are in one slot; got {namespace!r}"
            )
        try:
            cluster = _cluster.connect(nodes, **connection_options)
        except ValueError as error:
            raise ConfigurationError(f"bad cluster address {nodes!r}: {error}") from error
        client = cls(
            redis=cluster,
            namespace=namespace,
            worker_name=worker_name,
            clock=clock,
            sharded_pubsub=sharded_pubsub,
        )
        client._owns_redis = True
        return client

    def _use(self, redis: AnyRedis) -> None:
        self._protocol = ScriptCaller(
            redis,
            prefix=None if self.prefix == "ql:" else self.prefix,
            clock=self.clock,
            connection=self.script_connection,
        )

    async def open(self) -> Self:
        """Start (or find) the embedded server when no URL was given, then check that the
        server does not evict keys (a warning, or ConfigurationError when ``strict``).
        ``async with client`` calls it; it returns the client.

        Raises:
            ClientClosedError: the client was closed.
            ConfigurationError: ``strict`` and the server's ``maxmemory-policy`` evicts
                keys (the client is then closed).

        Examples:
            ```python
            client = await aqless.Client("redis://localhost:6379/0", strict=True).open()
            try:
                print(await client.queues.names())
            finally:
                await client.aclose()
            ```
        """
        self._lifecycle.check_usable()
        if self._protocol is None:
            from aqless import embedded

            self.url = await embedded.default_url_async()
            self._use(connecting.connect(self.url, self._connection_options))
        await check_eviction_policy(self.protocol.wire, strict=self.strict, refusing=self.aclose)
        self._lifecycle.opened()
        for spool in self._spools:
            spool.start()
        return self

    async def aclose(self) -> None:
        """Release every connection; the client then refuses every call and every open
        (ClientClosedError). Closing twice is harmless. Shielded: a cancelled task still
        closes. The spools made by `spool` flush one last time first; connections get up
        to 5 seconds to close.

        Examples:
            ```python
            client = await aqless.Client("redis://localhost:6379/0").open()
            try:
                await client.queues["emails"].put("app.jobs.SendEmail", {"to": "ada@example.com"})
            finally:
                await client.aclose()
            ```
        """
        if self._lifecycle.state is not ClientState.CLOSED:
            with anyio.CancelScope(shield=True):
                for spool in self._spools:  # their last flush, while the client still calls
                    await spool.aclose()
        if not self._lifecycle.close():
            return
        with anyio.move_on_after(5, shield=True):
            if self._protocol is not None:
                await self._protocol.close()
                if self._owns_redis:
                    await self._protocol.redis.aclose()
            for sentinel in self._sentinels:
                await sentinel.aclose()
        self._sentinels = []

    #: `aclose` under its earlier name.
    close = aclose

    def spool(
        self,
        *,
        capacity: int = 10_000,
        path: str | os.PathLike[str] | None = None,
        dedup_ttl: float = 86_400.0,
        batch: int = 500,
    ) -> Spool:
        """A spool for this client's puts while the server cannot be reached (reliable
        push): ``await spool.put("emails", Send, data)`` puts the job, or keeps it in the
        spool and says so (`aqless.PutReceipt`); the spool's puts are sent, in order and
        each exactly once, when the server answers again, by a task that runs while this
        client is open. See `aqless.Spool` and docs/guides/outage.md.

        Args:
            capacity: the most puts the spool holds (default 10,000); one more, while the
                server is away, is a SpoolFullError.
            path: a file that keeps the puts across a restart of the process (one process
                per file; ``{pid}`` in it stands for the process's id). Default None: in
                memory.
            dedup_ttl: seconds each put's dedup id is held on the server (default 86,400:
                a day).
            batch: puts sent per round trip of a flush (default 500).

        Raises:
            ClientClosedError: this client was closed.
            InvalidValueError: a setting outside its rule (see `aqless.Spool`).
            ConfigurationError: the file at `path` is in use by another process's spool,
                or damaged.

        Examples:
            ```python
            async with aqless.Client() as client:
                spool = client.spool(capacity=10_000)  # in memory; path=... keeps it in a file
                receipt = await spool.put("emails", "app.jobs.SendEmail", {"to": "ada@example.com"})
                print(receipt.jid, "queued" if receipt.queued else "spooled")
            ```
        """
        self._lifecycle.check_usable()
        made = Spool(self, capacity=capacity, path=path, dedup_ttl=dedup_ttl, batch=batch)
        self._spools.append(made)
        if self._lifecycle.state is ClientState.OPENED:
            made.start()
        return made

    async def __aenter__(self) -> Self:
        return await self.open()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    @property
    def protocol(self) -> ScriptCaller:
        """The script caller (internal: the verbs of Queue, Job... go through it)."""
        self._lifecycle.check_usable()
        if self._protocol is None:
            raise ConfigurationError(
                "no server URL was given: use `async with Client() as client` (or await "
                "client.open()) to start the embedded server, or set AQLESS_URL"
            )
        return self._protocol

    @property
    def redis(self) -> AnyRedis:
        """The underlying redis.asyncio client (a ``RedisCluster`` from ``from_cluster``)."""
        return self.protocol.redis

    @property
    def sharded(self) -> Literal[False]:
        """Whether the deployment is sharded: never for this client (mypy narrows a
        ``Client | ShardedClient`` by it)."""
        return False

    @property
    def servers(self) -> list[Client]:
        """The plain client of each of the deployment's servers: this one alone."""
        return [self]

    @property
    def _events_source(self) -> PubSubSource:
        redis = self.redis
        return _cluster.NodePubSub(redis, self.prefix) if isinstance(redis, RedisCluster) else redis

    def events(self, *channels: str, workers: Sequence[str] = ()) -> EventStream:
        """An async iterator (and async context manager) of Events: `ql:log`, the
        tracked-job channels and `ql:progress` by default, or the channels named
        (``"completed"``...), plus the channels of the named workers. Nothing is read
        until the stream is entered or iterated.

        Args:
            *channels: the channels to listen to, without the namespace's prefix
                (``"completed"``, ``"failed"``, ``"log"``...); none: the default set.
            workers: worker names whose own channels to listen to as well (default none).

        Examples:
            ```python
            async with client.events("completed", "failed") as events:
                async for event in events:
                    print(event.channel, event.jid)
            ```
        """
        return EventStream(
            self._events_source,
            prefix=self.prefix,
            channels=channels,
            workers=workers,
            sharded=self.sharded_pubsub,
        )

    async def wait(self, jid: str, *, timeout: float | None = None) -> JobState | None:
        """Wait until the job completes or fails (its final state); None if it was
        cancelled or is gone. Driven by events; the state is read now and then too, since
        a retry that fails a job publishes none (aqless.events.wait_for).

        Args:
            jid: the job to wait for.
            timeout: the most seconds to wait (default None: no limit).

        Returns:
            ``JobState.COMPLETE`` or ``JobState.FAILED``; None when the job was cancelled
            or is gone.

        Raises:
            TimeoutError: the job did not finish within `timeout` seconds.
            ConnectionLostError: the first subscription cannot reach the server.

        Examples:
            ```python
            jid = await client.queues["emails"].put("app.jobs.SendEmail", {"to": "ada@example.com"})
            state = await client.wait(jid, timeout=30)
            print(state)  # JobState.COMPLETE, JobState.FAILED or None
            ```
        """

        async def current_state() -> str | None:
            # through the script, like every read: a read cancelled when the event comes
            # first leaves no connection half-used, and a server condition is a typed error
            fields = await self.protocol.json("job.get", jid)
            state = fields.get("state") if isinstance(fields, dict) else None
            return state if isinstance(state, str) else None

        final = await wait_for(
            self._events_source,
            jid,
            prefix=self.prefix,
            timeout=timeout,
            current_state=current_state,
            sharded=self.sharded_pubsub,
        )
        return None if final is None else JobState(final)

    async def result(self, jid: str, *, timeout: float | None = None) -> Any:
        """Wait (as `wait` does) until the job finishes, then return its handler's return
        value (decoded JSON; None when it returned None).

        Args:
            jid: the job whose result to wait for.
            timeout: the most seconds to wait (default None: no limit).

        Raises:
            JobFailedError: the job failed (the error carries the failure's group and
                message).
            JobGoneError: the job was cancelled, expired or never put.
            ResultDroppedError: the job completed but its value was not kept.
            ResultTimeoutError: the job did not finish within `timeout` seconds.

        Examples:
            ```python
            jid = await client.queues["math"].put("app.jobs.Add", {"a": 2, "b": 3})
            try:
                print(await client.result(jid, timeout=60))  # 5
            except aqless.JobFailedError as failed:
                print("failed:", failed)
            ```
        """
        return await await_result(self, jid, timeout)

    async def signal(
        self, jid: str, signal: str, payload: Any = None, *, signal_id: str | None = None
    ) -> signals.Delivery:
        """Send `signal` with `payload` (JSON) to the workflow `jid` (aqless.workflows): kept
        until a wait of it (``ctx.wait_for(signal)``) takes it, and waking it if it is parked
        waiting for it.

        Args:
            jid: the workflow's job.
            signal: the signal's name, as the workflow waits for it.
            payload: any JSON value (default None), what the wait returns.
            signal_id: a delivery's id (default: a new random one); a second delivery of one
                id is taken once (``"duplicate"``): send again with the same id safely.

        Returns:
            ``"woken"`` (the workflow waited for it and runs again), ``"kept"`` (kept for a
            later wait) or ``"duplicate"`` (its id was delivered before).

        Raises:
            InvalidValueError: a bad `jid`, `signal` or `signal_id`; nothing sent.
            PayloadError: `payload` is not JSON; nothing sent.
            JobNotFoundError: no job has that jid.
            SignalRefusedError: the job has ended (completed or failed); nothing written.

        Examples:
            ```python
            jid = await client.queues["orders"].put("shop.Order", {"amount": 42})
            assert await client.signal(jid, "approval", {"by": "mia"}) == "kept"
            ```
        """
        return await signals.send(self.protocol, jid, signal, payload, signal_id, self.codec)

    def __repr__(self) -> str:
        return f"<Client {self.url or 'embedded'} {self.prefix}>"


@asynccontextmanager
async def connect(url: str | None = None, **options: Any) -> AsyncIterator[Client]:
    """``async with aqless.connect(url) as client``: the same as ``async with Client(url)``."""
    async with Client(url, **options) as client:
        yield client
