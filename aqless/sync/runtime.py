"""The machinery of the blocking clients: one event loop on a daemon thread, owned by the
client, holding the async client (``aqless.Client`` or ``aqless.ShardedClient``); each
blocking call hands a coroutine to it (``asyncio.run_coroutine_threadsafe``) and waits for its
result. Calls from any number of threads therefore share one set of connections and need no
lock of their own.

After ``os.fork()`` (gunicorn's ``--preload``) the child has neither the thread nor a safe
use of the parent's sockets: its first call starts a loop and connections of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import weakref
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any, Generic, Self, TypeVar

from aqless import contracts
from aqless._connection.lifecycle import Lifecycle
from aqless.client import Client as PlainClient
from aqless.errors import ConfigurationError
from aqless.job import Job, RecurringJob
from aqless.models import JobState

T = TypeVar("T")
J = TypeVar("J", Job, RecurringJob)


C = TypeVar("C", bound=contracts.Client)

#: How long closing (the client's connections, then the loop's thread) may take.
CLOSE_TIMEOUT = 5.0


def _new_loop() -> asyncio.AbstractEventLoop:
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


class _Runtime(Generic[C]):
    """One loop on one daemon thread, and the async client living on it, for the process
    that made them."""

    def __init__(self, make: Callable[[], C]) -> None:
        self.pid = os.getpid()
        self.loop = _new_loop()
        self.thread = threading.Thread(
            target=self.loop.run_forever, name="aqless-sync", daemon=True
        )
        self.thread.start()
        self.opened: asyncio.Future[C] | None = None
        try:  # made on the loop: whatever it builds belongs to that loop
            self.client = self.run(self._make(make), None)
        except BaseException:
            self.stop()
            raise

    @staticmethod
    async def _make(make: Callable[[], C]) -> C:
        return make()

    def run(self, coroutine: Awaitable[T], timeout: float | None) -> T:
        if threading.current_thread() is self.thread:
            raise ConfigurationError("a sync aqless client cannot be called from its own loop")
        future = asyncio.run_coroutine_threadsafe(_awaited(coroutine), self.loop)
        try:
            return future.result(timeout)
        except BaseException:  # out of time, or the caller interrupted (Ctrl-C): stop it
            future.cancel()
            raise

    async def open_client(self) -> C:
        """The client, opened once (the embedded server, the eviction check); tried again
        by the next call after a failure."""
        opened = self.opened
        if opened is None or (opened.done() and (opened.cancelled() or opened.exception())):
            opened = self.opened = asyncio.ensure_future(self.client.open())
        await asyncio.shield(opened)
        return self.client

    def close(self) -> None:
        """Close the client and stop the loop, within CLOSE_TIMEOUT. In a forked child the
        parent's loop and sockets are left alone: they are not this process's to close."""
        if os.getpid() != self.pid or self.loop.is_closed():
            return
        if self.thread.is_alive():
            with contextlib.suppress(Exception):  # at exit: no one is left to tell
                self.run(self.client.aclose(), CLOSE_TIMEOUT)
        self.stop()

    def stop(self) -> None:
        if self.thread.is_alive():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(CLOSE_TIMEOUT)
        if not self.thread.is_alive():
            self.loop.close()


async def _awaited(awaitable: Awaitable[T]) -> T:
    return await awaitable


class BlockingClient(ABC, Generic[C]):
    """What every blocking client shares: the runtime of this process (a new one after a
    fork), `call`, `wait`, `result` and closing. A subclass says how its async client is
    made (`_make`) and which of its clients a job handle's verbs go to (`_job_client`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lifecycle = Lifecycle("this client")
        self._runtime = self._start()
        self._finalizer = weakref.finalize(self, self._runtime.close)
        _LIVE.add(self)

    @abstractmethod
    def _make(self) -> C:
        """The async client, made on the loop."""

    @abstractmethod
    async def _job_client(self, client: C, job: Job | RecurringJob) -> PlainClient:
        """The client of `client` (the loop's) that a job read earlier belongs to."""

    def _start(self) -> _Runtime[C]:
        return _Runtime(self._make)

    def _current(self) -> _Runtime[C]:
        """This process's runtime: a fresh one after a fork."""
        with self._lock:
            self._lifecycle.check_usable()
            if self._runtime.pid != os.getpid():
                self._finalizer.detach()  # the parent's: never closed from here
                self._runtime = self._start()
                self._finalizer = weakref.finalize(self, self._runtime.close)
            return self._runtime

    def call(self, verb: Callable[[C], Awaitable[T]], *, timeout: float | None = None) -> T:
        """Run ``verb(async_client)`` on the client's loop and return its result: for what
        this module does not wrap (``client.call(lambda c: c.config.get("heartbeat"))``).
        Hand back plain values only: an async object is of no use outside the loop."""
        runtime = self._current()

        async def called() -> T:
            return await verb(await runtime.open_client())

        return runtime.run(called(), timeout)

    def _on_job(self, job: J, verb: Callable[[J], Awaitable[T]]) -> T:
        """Run a verb of a job handle, bound to the loop's client it belongs to (a new
        one after a fork)."""

        async def bound(client: C) -> T:
            job._client = await self._job_client(client, job)
            return await verb(job)

        return self.call(bound)

    def wait(self, jid: str, *, timeout: float | None = None) -> JobState | None:
        """Block until the job completes or fails (its final state); None if it was
        cancelled or is gone. TimeoutError after `timeout` seconds."""
        return self.call(lambda client: client.wait(jid, timeout=timeout))

    def result(self, jid: str, *, timeout: float | None = None) -> Any:
        """Block until the job finishes and return its handler's return value, or raise
        why there is none (see ``aqless.Client.result``)."""
        return self.call(lambda client: client.result(jid, timeout=timeout))

    def signal(
        self, jid: str, signal: str, payload: Any = None, *, signal_id: str | None = None
    ) -> str:
        """Send a signal to the workflow `jid` (see ``aqless.Client.signal``)."""
        return self.call(lambda client: client.signal(jid, signal, payload, signal_id=signal_id))

    def close(self) -> None:
        """Release every connection and stop the loop's thread; the client then refuses
        every call (ClientClosedError). Closing twice is harmless."""
        with self._lock:
            self._lifecycle.close()
        self._finalizer()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


# clients alive in this process; after a fork, each gets a new lock (the parent's may have
# been held by a thread that does not exist in the child)
_LIVE: weakref.WeakSet[BlockingClient[Any]] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for client in list(_LIVE):
        client._lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)
