"""`serve()`: the dashboard alone, on uvicorn, until cancelled (or interrupted)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import anyio
import uvicorn

from aqless.client import Client
from aqless.ops import audit
from aqless.sharding.client import AnyClient, ShardedClient
from aqless.web.app import create_app
from aqless.web.auth import Users

CLOSE_TIMEOUT = 5.0


class _Server(uvicorn.Server):
    """uvicorn's server, minus its signal capture: it re-raises SIGTERM and SIGINT after
    shutting down, so a dashboard stopped cleanly would still die of the signal."""

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def _stop_on_signals(server: uvicorn.Server) -> None:
    """SIGTERM or SIGINT: shut down gracefully (a second one: at once), then exit 0."""
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as received:
        async for _ in received:
            if server.should_exit:
                server.force_exit = True
            server.should_exit = True


async def serve(
    url: str | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    read_only: bool = False,
    namespace: str | None = None,
    deployment: str | None = None,
    users: Users | None = None,
    audit_length: int = audit.DEFAULT_LENGTH,
    trusted_origins: Iterable[str] = (),
) -> None:
    """Serve the dashboard of the deployment at `url` (the embedded Valkey when None) on
    http://host:port/ until this coroutine is cancelled or the process gets SIGTERM or
    SIGINT (which end it normally); with `deployment`, of that sharded deployment on the
    Cluster at `url`. With `users`, only they get in; `trusted_origins`: see `create_app`.

    Args:
        url: the server (default None: the embedded Valkey).
        host: the address to listen on (default ``"127.0.0.1"``: this machine only).
        port: the port (default 8000).
        read_only: offer no action (default False).
        namespace: the deployment whose keys are under ``NAME:ql:`` (default None).
        deployment: a sharded deployment's name on the Cluster at `url` (default None).
        users: only these users get in (default None: everyone who reaches it).
        audit_length: entries the audit log of actions keeps (default 10000).
        trusted_origins: see `create_app`.

    Raises:
        ConnectionLostError: the server could not be reached.
        ConfigurationError: a bad URL, or the ``web`` extra is not installed.

    Examples:
        ```python
        from aqless.web import serve

        asyncio.run(serve("redis://localhost:6379", port=8080, read_only=True))
        ```
    """
    client: AnyClient = (
        Client(url, namespace=namespace)
        if deployment is None
        else ShardedClient(url or "", deployment=deployment)
    )
    try:
        await client.open()
        config = uvicorn.Config(
            create_app(
                client,
                read_only=read_only,
                users=users,
                audit_length=audit_length,
                trusted_origins=trusted_origins,
            ),
            host=host,
            port=port,
            lifespan="off",
            timeout_graceful_shutdown=2,  # open live pages would hold a shutdown forever
            log_level="info",
        )
        server = _Server(config)
        try:
            async with anyio.create_task_group() as group:
                if threading.current_thread() is threading.main_thread():
                    group.start_soon(_stop_on_signals, server)
                await server.serve()
                group.cancel_scope.cancel()
        except anyio.get_cancelled_exc_class():
            with anyio.move_on_after(CLOSE_TIMEOUT, shield=True):
                await server.shutdown()
            raise
    finally:
        # Client.close() is not shielded: cancelled, it would leave its connections open
        with anyio.move_on_after(CLOSE_TIMEOUT, shield=True):
            await client.close()
