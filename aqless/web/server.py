"""`serve()`: the dashboard alone, on uvicorn, until cancelled (or interrupted)."""

from __future__ import annotations

import anyio
import uvicorn

from aqless.client import Client
from aqless.web.app import create_app

CLOSE_TIMEOUT = 5.0


async def serve(
    url: str | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    read_only: bool = False,
    namespace: str | None = None,
) -> None:
    """Serve the dashboard of the deployment at `url` (the embedded Valkey when None) on
    http://host:port/ until this coroutine is cancelled or the process is interrupted."""
    client = Client(url, namespace=namespace)
    try:
        await client.open()
        config = uvicorn.Config(
            create_app(client, read_only=read_only),
            host=host,
            port=port,
            lifespan="off",
            timeout_graceful_shutdown=2,  # open live pages would hold a shutdown forever
            log_level="info",
        )
        server = uvicorn.Server(config)
        try:
            await server.serve()
        except anyio.get_cancelled_exc_class():
            with anyio.move_on_after(CLOSE_TIMEOUT, shield=True):
                await server.shutdown()
            raise
    finally:
        # Client.close() is not shielded: cancelled, it would leave its connections open
        with anyio.move_on_after(CLOSE_TIMEOUT, shield=True):
            await client.close()
